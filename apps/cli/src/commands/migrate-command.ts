import { SCHEMA_VERSION } from "@hermes/schema";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { Command } from "commander";
import { CliError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { locateDatabase, peekSchemaVersion, requireExisting } from "../open-database.js";
import { createProgress } from "../render/progress.js";
import { printJson } from "../write-output.js";

/** Refuses a SQLite file that holds other tables but no sessions: it is someone else's. */
function refuseForeign(path: string): void {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const names = (
      db.prepare("SELECT name FROM sqlite_master WHERE type='table'").all() as Array<{ name: string }>
    ).map((r) => r.name);
    if (names.length > 0 && !names.includes("sessions")) {
      throw new CliError(
        `${path} is a SQLite database but not a Hermes state.db (no sessions table); left as it is`,
      );
    }
  } finally {
    db.close();
  }
}

/** `migrate`: upgrades an old state.db (schema v1–v10) to v11, with progress. */
export function migrateCommand(): Command {
  return new Command("migrate")
    .description(
      `upgrade an older state.db to schema v${SCHEMA_VERSION} (rebuilds search indexes, with progress)`,
    )
    .option("--json", "print the migration report as JSON")
    .action(async (o: { json?: boolean }, cmd: Command) => {
      const g = globalOptions(cmd);
      const location = locateDatabase(g);
      requireExisting(location);
      const before = peekSchemaVersion(location.path);
      if (before === null) refuseForeign(location.path);
      const progress = createProgress("migrating");
      let report: Awaited<ReturnType<typeof openSessionStore>>["migration"];
      try {
        const store = await openSessionStore({
          path: location.path,
          onMigrationProgress: (p) => progress.update(p.done, p.total, p.step),
        });
        report = store.migration;
        await store.close();
      } finally {
        progress.finish();
      }
      if (o.json) return printJson({ path: location.path, ...report });
      const lines: string[] = [];
      if (report.newerVersion) {
        lines.push(
          `${location.path} is at schema v${report.fromVersion}, newer than v${SCHEMA_VERSION}; left as it is.`,
        );
      } else if (report.applied.length === 0) {
        lines.push(`${location.path} is already at schema v${report.toVersion}; nothing to do.`);
      } else {
        lines.push(
          `Upgraded ${location.path} from ${report.fromVersion === null ? "an empty file" : `v${report.fromVersion}`} to v${report.toVersion}.`,
        );
        lines.push(`Steps: ${report.applied.join(", ")}`);
      }
      for (const w of report.warnings) lines.push(`warning: ${w}`);
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
