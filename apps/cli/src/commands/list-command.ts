import { Command } from "commander";
import { globalOptions } from "../global-options.js";
import { openForReading, withStore } from "../open-database.js";
import { collectList, parseCount } from "../parse-options.js";
import { formatCount, formatTime } from "../render/format-time.js";
import { renderTable } from "../render/table.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
import { oneLine } from "../render/text-width.js";
import { printJson } from "../write-output.js";

interface ListOptions {
  source?: string;
  excludeSource?: string[];
  limit: number;
  offset: number;
  all?: boolean;
  includeArchived?: boolean;
  includeHidden?: boolean;
  json?: boolean;
}

/** `list`: sessions newest first, with title, source, model, times, counts and preview. */
export function listCommand(): Command {
  return new Command("list")
    .alias("ls")
    .description("list sessions, newest first (compression chains shown as their latest part)")
    .option("-s, --source <source>", "only sessions from this source (cli, telegram, …)")
    .option("--exclude-source <sources>", "hide these sources (repeatable, comma-separated)", collectList)
    .option("-n, --limit <n>", "at most this many sessions", parseCount("--limit"), 20)
    .option("--offset <n>", "skip this many sessions", parseCount("--offset"), 0)
    .option("-a, --all", "include child sessions (delegations, compression parts)")
    .option("--include-archived", "include sessions a newer agent marks archived (left out by default)")
    .option("--include-hidden", "include sessions a newer agent marks hidden (left out by default)")
    .option("--json", "print the rows as JSON")
    .action(async (o: ListOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      await withStore(await openForReading(g), async (store) => {
        const rows = await store.listSessionsRich({
          ...(o.source !== undefined ? { source: o.source } : {}),
          ...(o.excludeSource !== undefined ? { excludeSources: o.excludeSource } : {}),
          limit: o.limit,
          offset: o.offset,
          includeChildren: o.all === true,
          includeArchived: o.includeArchived === true,
          includeHidden: o.includeHidden === true,
        });
        if (o.json) return printJson(rows);
        const style = createStyle(wantsColor(process.stdout, g.color));
        if (rows.length === 0) {
          process.stdout.write("No sessions.\n");
          return;
        }
        const table = renderTable(
          [
            { header: "ID", maxWidth: 32 },
            { header: "TITLE", maxWidth: 30 },
            { header: "SOURCE" },
            { header: "MODEL", maxWidth: 24 },
            { header: "STARTED" },
            { header: "LAST ACTIVE" },
            { header: "MSGS", align: "right" },
            { header: "PREVIEW", maxWidth: 48 },
          ],
          rows.map((r) => [
            r.id,
            r.title ?? "",
            r.source,
            r.model ?? "",
            formatTime(r.started_at),
            formatTime(r.last_active),
            formatCount(r.message_count),
            oneLine(r.preview),
          ]),
          style,
          process.stdout.isTTY ? process.stdout.columns : undefined,
        );
        process.stdout.write(`${table}\n`);
      });
    });
}
