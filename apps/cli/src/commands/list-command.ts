import {
  MAX_LIMIT,
  type RichSessionRow,
  readSessionName,
  type SessionStore,
  sessionDisplayName,
} from "@hermes/core";
import { Command } from "commander";
import { globalOptions } from "../global-options.js";
import { openForReading, withStore } from "../open-database.js";
import { delimited, type OutputOptions, outputFormat, withOutputOptions } from "../output-format.js";
import { withPagingOptions } from "../parse-options.js";
import { formatCount, formatTime } from "../render/format-time.js";
import { sessionMarks } from "../render/session-marks.js";
import { outputWidth, renderTable } from "../render/table.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
import { oneLine } from "../render/text-width.js";
import {
  listFilters,
  type SelectionOptions,
  selectSources,
  sourceFilters,
  withSelectionOptions,
} from "../session-selection.js";
import { printJson } from "../write-output.js";

interface ListOptions extends SelectionOptions, OutputOptions {
  limit: number;
  offset: number;
  all?: boolean;
}

/** Columns of `list --csv/--tsv`. */
const CSV_COLUMNS = [
  "id",
  "title",
  "source",
  "model",
  "parent_session_id",
  "started_at",
  "chain_started_at",
  "ended_at",
  "end_reason",
  "last_active",
  "message_count",
  "tool_call_count",
  "input_tokens",
  "output_tokens",
  "estimated_cost_usd",
  "preview",
];

/** A row of `list`: `started_at` is the session's own start, `chain_started_at` its chain's. */
export type ListRow = RichSessionRow & { chain_started_at?: number };

/**
 * The rows of `list`. The store projects a compression chain onto its newest part but keeps
 * the chain's start in `started_at` (as the reference does); here `started_at` means the same
 * in every listing (the session's own start) and the chain's start moves to `chain_started_at`.
 */
export async function listRows(store: SessionStore, o: ListOptions): Promise<ListRow[] | null> {
  const sources = await selectSources(store, o);
  if (sources !== null && sources.length === 0) return null;
  const rows = await store.listSessionsRich({
    ...(await sourceFilters(store, sources)),
    ...listFilters(o),
    limit: o.limit,
    offset: o.offset,
    includeChildren: o.all === true,
  });
  const out: ListRow[] = [];
  for (const row of rows) {
    if (row._lineage_root_id === undefined || row._lineage_root_id === row.id) {
      out.push(row);
      continue;
    }
    const own = await store.getSession(row.id);
    out.push({ ...row, started_at: own?.started_at ?? row.started_at, chain_started_at: row.started_at });
  }
  return out;
}

/**
 * The name `list` shows for a row (`sessionDisplayName`, as the web's Sessions page): a
 * compression chain, shown as its newest part, is named after its first session.
 */
async function rowName(store: SessionStore, row: ListRow): Promise<string> {
  const root = row._lineage_root_id;
  if (root === undefined || root === null || root === row.id) return sessionDisplayName(row);
  return (await readSessionName(store, root)) ?? sessionDisplayName(row);
}

/**
 * The session's marks (`[pinned]`, `[archived]`, …) of a newer agent's file, then its name: the
 * marks first, so that a name cut to the column's width never hides them.
 */
function nameWithMarks(name: string, r: ListRow): string {
  return [...sessionMarks(r).map((m) => `[${m}]`), name].join(" ");
}

/** `list`: sessions newest first, with name and marks, source, model, times, counts and preview. */
export function listCommand(): Command {
  const command = withPagingOptions(
    withSelectionOptions(
      new Command("list")
        .alias("ls")
        .description("list sessions, newest first (compression chains shown as their latest part)"),
      { flagged: true },
    ),
    "sessions",
    MAX_LIMIT,
  )
    .option("-a, --all", "include child sessions (delegations, compression parts)")
    .addHelpText(
      "after",
      "\nTITLE is the session's name: its title, else its first user message, else (untitled); a\ncompression chain is named after its first session. --json/--csv/--tsv keep the stored title.\n",
    );
  return withOutputOptions(command, "rows").action(async (o: ListOptions, cmd: Command) => {
    const g = globalOptions(cmd);
    const format = outputFormat(o);
    await withStore(await openForReading(g), async (store) => {
      const rows = (await listRows(store, o)) ?? [];
      if (format === "json") return printJson(rows);
      if (format !== "table") {
        process.stdout.write(delimited(rows, CSV_COLUMNS, format));
        return;
      }
      const style = createStyle(wantsColor(process.stdout, g.color));
      if (rows.length === 0) {
        process.stdout.write("No sessions.\n");
        return;
      }
      const table = renderTable(
        [
          // The id is what a user copies into the next command: never cut unless alone.
          { header: "ID", maxWidth: 40, minWidth: Number.POSITIVE_INFINITY },
          { header: "TITLE", maxWidth: 30, minWidth: 10 },
          { header: "SOURCE", minWidth: 8, dropOrder: 3 },
          { header: "MODEL", maxWidth: 24, minWidth: 8, dropOrder: 5 },
          { header: "STARTED", minWidth: Number.POSITIVE_INFINITY, dropOrder: 2 },
          { header: "LAST ACTIVE", minWidth: Number.POSITIVE_INFINITY, dropOrder: 4 },
          { header: "MSGS", align: "right" },
          { header: "PREVIEW", maxWidth: 48, minWidth: 12, dropOrder: 6 },
        ],
        await Promise.all(
          rows.map(async (r) => {
            const name = await rowName(store, r);
            return [
              r.id,
              nameWithMarks(name, r),
              r.source,
              r.model ?? "",
              formatTime(r.started_at),
              formatTime(r.last_active),
              formatCount(r.message_count),
              // An untitled session is named by its preview: not shown twice.
              name === sessionDisplayName({ title: null, preview: r.preview }) ? "" : oneLine(r.preview),
            ];
          }),
        ),
        style,
        outputWidth(),
      );
      process.stdout.write(`${table}\n`);
    });
  });
}
