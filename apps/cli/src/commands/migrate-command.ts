import { SCHEMA_VERSION } from "@hermes/schema";
import { openSessionStore } from "@hermes/store";
import { Command } from "commander";
import { CliError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { locateDatabase, peekSchemaVersion, requireExisting } from "../open-database.js";
import { createProgress } from "../render/progress.js";
import { foreignFile } from "../unusable-file.js";
import { printJson } from "../write-output.js";

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
      const foreign = before === null ? foreignFile(location.path) : null;
      if (foreign !== null) throw new CliError(foreign);
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
