import type { UsageStatsRow } from "@hermes/store";
import { Command, Option } from "commander";
import { globalOptions } from "../global-options.js";
import { openForReading, withStore } from "../open-database.js";
import { parseSince } from "../parse-options.js";
import { formatCost, formatCount } from "../render/format-time.js";
import { renderTable } from "../render/table.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
import { printJson } from "../write-output.js";

interface StatsOptions {
  by?: "source" | "model" | "day";
  source?: string;
  since?: number;
  until?: number;
  json?: boolean;
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

/** One row summing every group (the total when no `--by` is given). */
export function totalOf(rows: UsageStatsRow[]): UsageStatsRow {
  const total: UsageStatsRow = {
    group: "total",
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

/** `stats`: sessions, messages, tokens and cost, in total or per source, model or day. */
export function statsCommand(): Command {
  return new Command("stats")
    .description("usage: sessions, messages, tokens and cost (total, or --by source|model|day)")
    .addOption(
      new Option("--by <group>", "one row per source, model or UTC day").choices(["source", "model", "day"]),
    )
    .option("-s, --source <source>", "only sessions from this source")
    .option(
      "--since <date>",
      "only sessions started since a date (2026-01-31) or age (7d)",
      parseSince("--since"),
    )
    .option("--until <date>", "only sessions started before a date", parseSince("--until"))
    .option("--json", "print the rows as JSON")
    .action(async (o: StatsOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      await withStore(await openForReading(g), async (store) => {
        const grouped = await store.usageStats({
          groupBy: o.by ?? "source",
          ...(o.source !== undefined ? { source: o.source } : {}),
          ...(o.since !== undefined ? { since: o.since } : {}),
          ...(o.until !== undefined ? { until: o.until } : {}),
        });
        const rows = o.by === undefined ? [totalOf(grouped)] : [...grouped, totalOf(grouped)];
        if (o.json) return printJson(o.by === undefined ? rows[0] : grouped);
        const style = createStyle(wantsColor(process.stdout, g.color));
        const table = renderTable(
          [
            { header: (o.by ?? "").toUpperCase(), maxWidth: 32 },
            { header: "SESSIONS", align: "right" },
            { header: "MESSAGES", align: "right" },
            { header: "TOOL CALLS", align: "right" },
            { header: "INPUT TOK", align: "right" },
            { header: "OUTPUT TOK", align: "right" },
            { header: "CACHE READ", align: "right" },
            { header: "REASONING", align: "right" },
            { header: "EST. COST", align: "right" },
            { header: "ACTUAL COST", align: "right" },
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
        );
        process.stdout.write(`${table}\n`);
      });
    });
}
