import type { SessionRow, SessionStore, UsageStatsOptions, UsageStatsRow } from "@hermes/core";
import { Command, Option } from "commander";
import { globalOptions } from "../global-options.js";
import { openForReading, withStore } from "../open-database.js";
import { delimited, type OutputOptions, outputFormat, withOutputOptions } from "../output-format.js";
import { formatCost, formatCount } from "../render/format-time.js";
import { outputWidth, renderTable } from "../render/table.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
import {
  type SelectionOptions,
  selectedSessions,
  selectSources,
  withSelectionOptions,
} from "../session-selection.js";
import { visibilityOf } from "../visibility-options.js";
import { printJson } from "../write-output.js";

interface StatsOptions extends SelectionOptions, OutputOptions {
  by?: "source" | "model" | "day";
}

const NUMERIC = [
  "sessions",
  "messages",
  "tool_calls",
  "api_calls",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
] as const;

/** One row summing `rows` (the total when no `--by` is given), named `group`. */
export function totalOf(rows: UsageStatsRow[], group: string | null = "total"): UsageStatsRow {
  const total: UsageStatsRow = {
    group,
    sessions: 0,
    messages: 0,
    tool_calls: 0,
    api_calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
    estimated_cost_usd: null,
    actual_cost_usd: null,
  };
  for (const r of rows) {
    for (const k of NUMERIC) total[k] += r[k] ?? 0;
    if (r.estimated_cost_usd !== null)
      total.estimated_cost_usd = (total.estimated_cost_usd ?? 0) + r.estimated_cost_usd;
    if (r.actual_cost_usd !== null) total.actual_cost_usd = (total.actual_cost_usd ?? 0) + r.actual_cost_usd;
  }
  return total;
}

/**
 * Usage of the selected sources: the store's one query when no source filter is given, else
 * one query per source with the groups of the same name summed (a model used from two
 * sources is one row).
 */
async function usage(store: SessionStore, o: StatsOptions): Promise<UsageStatsRow[]> {
  const base: UsageStatsOptions = {
    groupBy: o.by ?? "source",
    ...(o.since !== undefined ? { since: o.since } : {}),
    ...(o.until !== undefined ? { until: o.until } : {}),
    ...visibilityOf(o),
  };
  if (o.model !== undefined || o.title !== undefined) {
    // Filters usageStats has not: the same sums over the sessions the listing selects.
    return usageOfSessions((await selectedSessions(store, o)) ?? [], base.groupBy);
  }
  const sources = await selectSources(store, o);
  if (sources === null) return store.usageStats(base);
  const rows: UsageStatsRow[] = [];
  for (const source of sources) rows.push(...(await store.usageStats({ ...base, source })));
  return mergeGroups(rows, base.groupBy);
}

/** Rows of the same group summed into one, ordered as `usageStats` orders them. */
function mergeGroups(rows: UsageStatsRow[], by: UsageStatsOptions["groupBy"]): UsageStatsRow[] {
  const groups = new Map<string | null, UsageStatsRow[]>();
  for (const row of rows) groups.set(row.group, [...(groups.get(row.group) ?? []), row]);
  return [...groups]
    .map(([group, same]) => (same.length === 1 ? same[0]! : totalOf(same, group)))
    .sort((a, b) =>
      by === "day" ? String(a.group).localeCompare(String(b.group)) : b.sessions - a.sessions,
    );
}

/** The group of a session: its source, its model, or the UTC day it started. */
function groupOf(s: SessionRow, by: UsageStatsOptions["groupBy"]): string | null {
  if (by === "source") return s.source;
  if (by === "model") return s.model ?? null;
  return new Date(s.started_at * 1000).toISOString().slice(0, 10);
}

/** `usageStats`' rows computed from session rows (each session's own counters, summed). */
export function usageOfSessions(sessions: SessionRow[], by: UsageStatsOptions["groupBy"]): UsageStatsRow[] {
  const rows = sessions.map(
    (s): UsageStatsRow => ({
      group: groupOf(s, by),
      sessions: 1,
      messages: s.message_count ?? 0,
      tool_calls: s.tool_call_count ?? 0,
      api_calls: s.api_call_count ?? 0,
      input_tokens: s.input_tokens ?? 0,
      output_tokens: s.output_tokens ?? 0,
      cache_read_tokens: s.cache_read_tokens ?? 0,
      cache_write_tokens: s.cache_write_tokens ?? 0,
      reasoning_tokens: s.reasoning_tokens ?? 0,
      estimated_cost_usd: s.estimated_cost_usd ?? null,
      actual_cost_usd: s.actual_cost_usd ?? null,
    }),
  );
  return mergeGroups(rows, by);
}

/** Columns of `stats --csv/--tsv`. */
const CSV_COLUMNS = ["group", ...NUMERIC, "estimated_cost_usd", "actual_cost_usd"];

/** `stats`: sessions, messages, tokens and cost, in total or per source, model or day. */
export function statsCommand(): Command {
  const command = withSelectionOptions(
    new Command("stats")
      .description(
        "usage of the sessions list shows: sessions, messages, tokens and cost (total, or --by source|model|day)",
      )
      .addOption(
        new Option("--by <group>", "one row per source, model or UTC day").choices([
          "source",
          "model",
          "day",
        ]),
      ),
    { flagged: true },
  );
  return withOutputOptions(command, "rows").action(async (o: StatsOptions, cmd: Command) => {
    const g = globalOptions(cmd);
    const format = outputFormat(o);
    await withStore(await openForReading(g), async (store) => {
      const grouped = await usage(store, o);
      const rows = o.by === undefined ? [totalOf(grouped)] : [...grouped, totalOf(grouped)];
      if (format === "json") return printJson(o.by === undefined ? rows[0] : grouped);
      if (format !== "table") {
        process.stdout.write(delimited(o.by === undefined ? rows : grouped, CSV_COLUMNS, format));
        return;
      }
      const style = createStyle(wantsColor(process.stdout, g.color));
      const table = renderTable(
        [
          { header: (o.by ?? "").toUpperCase(), maxWidth: 32, minWidth: 8 },
          { header: "SESSIONS", align: "right" },
          { header: "MESSAGES", align: "right", dropOrder: 2 },
          { header: "TOOL CALLS", align: "right", dropOrder: 5 },
          { header: "INPUT TOK", align: "right", dropOrder: 3 },
          { header: "OUTPUT TOK", align: "right", dropOrder: 3 },
          { header: "CACHE READ", align: "right", dropOrder: 7 },
          { header: "REASONING", align: "right", dropOrder: 6 },
          { header: "EST. COST", align: "right", dropOrder: 4 },
          { header: "ACTUAL COST", align: "right", dropOrder: 1 },
        ],
        rows.map((r) => [
          r.group ?? "(none)",
          formatCount(r.sessions),
          formatCount(r.messages),
          formatCount(r.tool_calls),
          formatCount(r.input_tokens),
          formatCount(r.output_tokens),
          formatCount(r.cache_read_tokens),
          formatCount(r.reasoning_tokens),
          formatCost(r.estimated_cost_usd),
          formatCost(r.actual_cost_usd),
        ]),
        style,
        outputWidth(),
      );
      process.stdout.write(`${table}\n`);
    });
  });
}
