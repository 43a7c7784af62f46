import type { SessionStore, UsageStatsOptions, UsageStatsRow } from "@hermes/core";
import { Command, Option } from "commander";
import { globalOptions } from "../global-options.js";
import { openForReading, withStore } from "../open-database.js";
import { delimited, type OutputOptions, outputFormat, withOutputOptions } from "../output-format.js";
import { parseSince } from "../parse-options.js";
import { formatCost, formatCount } from "../render/format-time.js";
import { outputWidth, renderTable } from "../render/table.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
import { type SourceOptions, selectSources, withSourceOptions } from "../source-filter.js";
import { type VisibilityOptions, visibilityOf, withVisibilityOptions } from "../visibility-options.js";
import { printJson } from "../write-output.js";

interface StatsOptions extends SourceOptions, VisibilityOptions, OutputOptions {
  by?: "source" | "model" | "day";
  since?: number;
  until?: number;
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
  const sources = await selectSources(store, o);
  if (sources === null) return store.usageStats(base);
  const groups = new Map<string | null, UsageStatsRow[]>();
  for (const source of sources) {
    for (const row of await store.usageStats({ ...base, source })) {
      groups.set(row.group, [...(groups.get(row.group) ?? []), row]);
    }
  }
  const merged = [...groups].map(([group, rows]) => (rows.length === 1 ? rows[0]! : totalOf(rows, group)));
  return merged.sort((a, b) =>
    base.groupBy === "day" ? String(a.group).localeCompare(String(b.group)) : b.sessions - a.sessions,
  );
}

/** Columns of `stats --csv/--tsv`. */
const CSV_COLUMNS = ["group", ...NUMERIC, "estimated_cost_usd", "actual_cost_usd"];

/** `stats`: sessions, messages, tokens and cost, in total or per source, model or day. */
export function statsCommand(): Command {
  const command = withSourceOptions(
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
  )
    .option(
      "--since <date>",
      "only sessions started since a date (2026-01-31) or age (7d)",
      parseSince("--since"),
    )
    .option("--until <date>", "only sessions started before a date", parseSince("--until"));
  withVisibilityOptions(command);
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
