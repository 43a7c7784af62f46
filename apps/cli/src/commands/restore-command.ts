import { existsSync } from "node:fs";
import { resolveStatePath, restoreFrom } from "@hermes/store";
import { Command } from "commander";
import { CliError, usageError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { isPostgresUrl } from "../open-database.js";
import { withProgress } from "../render/progress.js";
import { printJson } from "../write-output.js";

/**
 * `restore ARCHIVE`: replaces the database with a backup, refused while any process holds it;
 * the replaced file is kept as `<db>.before-restore-<time>`.
 */
export function restoreCommand(): Command {
  return new Command("restore")
    .description(
      "replace the database with a verified backup (refused while any process has it open; the old file is kept as <db>.before-restore-<time>)",
    )
    .argument("<archive>", "the .db.gz (or its .manifest.json)")
    .option("--json", "print what was done as JSON")
    .action(async (archive: string, o: { json?: boolean }, cmd: Command) => {
      if (!existsSync(archive)) throw new CliError(`No archive at ${archive}`);
      const target = globalOptions(cmd).db ?? resolveStatePath();
      if (isPostgresUrl(target)) throw usageError("restore works on a SQLite file, not on a PostgreSQL --db");
      const result = await withProgress("restore", (onProgress) =>
        restoreFrom(archive, {
          target,
          onProgress,
        }),
      );
      if (o.json)
        return printJson({
          target: result.target,
          previous: result.previous,
          sidecars: result.sidecars,
          manifest: result.manifest,
        });
      const m = result.manifest;
      const lines = [
        `Restored ${result.target} from the backup of ${m.createdAt} (${m.counts.sessions} sessions, ${m.counts.messages} messages).`,
      ];
      if (result.previous !== null) lines.push(`The replaced file is kept as ${result.previous}.`);
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
