import { type UsageStatsOptions, type UsageStatsRow, usageStatsArguments } from "@hermes/core";
import type { StoreContext } from "../store-context.js";

const GROUP_EXPRESSIONS = {
  source: "source",
  model: "model",
  day: "date(started_at, 'unixepoch')",
} as const;

// One aggregate over `sessions` (its counters), never over `messages`: statistics of a
// million-message store cost a scan of its sessions only.
const statsSql = (group: string) => `SELECT ${group} AS "group", COUNT(*) AS sessions,
    COALESCE(SUM(message_count), 0) AS messages, COALESCE(SUM(tool_call_count), 0) AS tool_calls,
    COALESCE(SUM(api_call_count), 0) AS api_calls, COALESCE(SUM(input_tokens), 0) AS input_tokens,
    COALESCE(SUM(output_tokens), 0) AS output_tokens, COALESCE(SUM(cache_read_tokens), 0) AS cache_read_tokens,
    COALESCE(SUM(cache_write_tokens), 0) AS cache_write_tokens, COALESCE(SUM(reasoning_tokens), 0) AS reasoning_tokens,
    SUM(estimated_cost_usd) AS estimated_cost_usd, SUM(actual_cost_usd) AS actual_cost_usd
  FROM sessions
  WHERE (:since IS NULL OR started_at >= :since) AND (:until IS NULL OR started_at < :until)
    AND (:source IS NULL OR source = :source)
  GROUP BY 1 ORDER BY 1`;

const STATS_SQL = {
  source: statsSql(GROUP_EXPRESSIONS.source),
  model: statsSql(GROUP_EXPRESSIONS.model),
  day: statsSql(GROUP_EXPRESSIONS.day),
} as const;

/**
 * Sessions, messages, every kind of token and cost, grouped by source, model or UTC day of
 * `started_at`; groups in ascending order (`null` first).
 */
export function usageStats(ctx: StoreContext, o: UsageStatsOptions): UsageStatsRow[] {
  const { groupBy, ...args } = usageStatsArguments(o);
  return ctx.conn.all<UsageStatsRow>(STATS_SQL[groupBy], [args]);
}
