import { basename } from "node:path";
import { listBackups } from "@hermes/store";
import { Command } from "commander";
import { backupFolder } from "../backup-folder.js";
import { globalOptions } from "../global-options.js";
import { locateDatabase } from "../open-database.js";
import { formatBytes, formatCount, formatTime } from "../render/format-time.js";
import { outputWidth, renderTable } from "../render/table.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
import { printJson } from "../write-output.js";

/** `backup list`: the backups in the folder, oldest first, complete or not (names, sizes, manifests). */
export function backupListCommand(): Command {
  return new Command("list")
    .description("list the backups in the folder, oldest first (run `backup verify` to check one)")
    .option("--to <dir>", "backup folder (default: backups/ beside the database)")
    .option("--json", "print the backups as JSON")
    .action((_o: unknown, cmd: Command) => {
      // `backup` declares --to and --json too, and takes them wherever they stand.
      const g = globalOptions(cmd);
      const o = cmd.optsWithGlobals() as { to?: string; json?: boolean };
      const folder = backupFolder(o, locateDatabase(g).path);
      const entries = listBackups(folder);
      if (o.json) return printJson(entries);
      if (entries.length === 0) {
        process.stdout.write(`No backups in ${folder}.\n`);
        return;
      }
      const table = renderTable(
        [
          { header: "ARCHIVE", minWidth: Number.POSITIVE_INFINITY },
          { header: "TAKEN", minWidth: Number.POSITIVE_INFINITY, dropOrder: 2 },
          { header: "SCHEMA", align: "right", dropOrder: 3 },
          { header: "SESSIONS", align: "right" },
          { header: "MESSAGES", align: "right" },
          { header: "SIZE", align: "right", dropOrder: 1 },
          { header: "STATUS", maxWidth: 60, minWidth: 8 },
        ],
        entries.map((e) => [
          basename(e.archive),
          e.manifest ? formatTime(Date.parse(e.manifest.createdAt) / 1000) : "",
          e.manifest?.schemaVersion == null ? "" : `v${e.manifest.schemaVersion}`,
          formatCount(e.manifest?.counts.sessions),
          formatCount(e.manifest?.counts.messages),
          e.archiveBytes === null ? "" : formatBytes(e.archiveBytes),
          e.problem ?? "complete",
        ]),
        createStyle(wantsColor(process.stdout, g.color)),
        outputWidth(),
      );
      process.stdout.write(`${table}\n`);
    });
}
