import { backupTo } from "@hermes/store";
import { Command } from "commander";
import { backupFolder } from "../backup-folder.js";
import { usageError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { isPostgresUrl, locateDatabase, requireExisting } from "../open-database.js";
import { parseCount } from "../parse-options.js";
import { formatBytes, formatCount } from "../render/format-time.js";
import { withProgress } from "../render/progress.js";
import { printJson } from "../write-output.js";
import { backupListCommand } from "./backup-list-command.js";
import { backupVerifyCommand } from "./backup-verify-command.js";

/**
 * `backup`: a verified, compressed snapshot of the database taken while the agent keeps
 * writing; `backup list` and `backup verify ARCHIVE` look at what is there.
 */
export function backupCommand(): Command {
  const command = new Command("backup")
    .description(
      "snapshot the database while the agent keeps writing: verified, gzip-compressed, with a manifest (--keep N rotates)",
    )
    .option("--to <dir>", "backup folder (default: backups/ beside the database)")
    .option("--keep <n>", "keep only the N newest backups of this database", parseCount("--keep"))
    .option("--level <n>", "gzip level, 1 (fastest, default) to 9 (smallest)", parseCount("--level"))
    .option("--json", "print the manifest of the backup as JSON")
    .action(async (o: { to?: string; keep?: number; level?: number; json?: boolean }, cmd: Command) => {
      if (o.keep === 0) throw usageError("--keep must be at least 1");
      if (o.level !== undefined && (o.level < 1 || o.level > 9))
        throw usageError("--level must be from 1 to 9");
      const location = locateDatabase(globalOptions(cmd));
      if (isPostgresUrl(location.path))
        throw usageError("backup works on a SQLite file, not on a PostgreSQL --db");
      requireExisting(location);
      const result = await withProgress("backup", (onProgress) =>
        backupTo(backupFolder(o, location.path), {
          source: location.path,
          ...(o.keep !== undefined ? { keep: o.keep } : {}),
          ...(o.level !== undefined ? { compressionLevel: o.level } : {}),
          onProgress,
        }),
      );
      const { manifest: m, archive, removed } = result;
      if (o.json) return printJson({ archive, manifestPath: result.manifestPath, removed, manifest: m });
      const lines = [
        `Backed up ${m.source.path} (schema ${m.schemaVersion === null ? "none" : `v${m.schemaVersion}`}, ${formatCount(m.counts.sessions)} sessions, ${formatCount(m.counts.messages)} messages)`,
        `  to ${archive}`,
        `  ${formatBytes(m.archiveBytes)} compressed from ${formatBytes(m.snapshot.bytes)}; snapshot ${m.timings.snapshotMs} ms (${m.snapshot.method}), checks ${m.timings.checkMs} ms, gzip ${m.timings.compressMs} ms; integrity ${m.snapshot.integrity}`,
      ];
      if (removed.length > 0) lines.push(`Removed ${removed.length} older backup(s) (--keep ${o.keep}).`);
      process.stdout.write(`${lines.join("\n")}\n`);
    });
  command.addCommand(backupListCommand());
  command.addCommand(backupVerifyCommand());
  return command;
}
