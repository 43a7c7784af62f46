import { type UsageStatsOptions, type UsageStatsRow, usageStatsArguments } from "@hermes/core";
import { SESSION_FLAGS_VIEW } from "../file-views.js";
import type { StoreContext } from "../store-context.js";

const GROUP_EXPRESSIONS = {
  source: "source",
  model: "model",
  day: "date(started_at, 'unixepoch')",
} as const;

// A newer agent's file: sessions it flags archived or hidden are left out unless asked for, so
// that the figures are those of what the listings show. The flags are read through the temp
// view of such a file's connection (file-views.ts); a v11 file has none and no such condition.
const UNFLAGGED = `AND id NOT IN (SELECT id FROM ${SESSION_FLAGS_VIEW}
    WHERE (archived != 0 AND :hide_archived = 1) OR (hidden != 0 AND :hide_hidden = 1))`;

// One aggregate over `sessions` (its counters), never over `messages`: statistics of a
// million-message store cost a scan of its sessions only.
const statsSql = (group: string, flagged: boolean) => `SELECT ${group} AS "group", COUNT(*) AS sessions,
    COALESCE(SUM(message_count), 0) AS messages, COALESCE(SUM(tool_call_count), 0) AS tool_calls,
    COALESCE(SUM(api_call_count), 0) AS api_calls, COALESCE(SUM(input_tokens), 0) AS input_tokens,
    COALESCE(SUM(output_tokens), 0) AS output_tokens, COALESCE(SUM(cache_read_tokens), 0) AS cache_read_tokens,
    COALESCE(SUM(cache_write_tokens), 0) AS cache_write_tokens, COALESCE(SUM(reasoning_tokens), 0) AS reasoning_tokens,
    SUM(estimated_cost_usd) AS estimated_cost_usd, SUM(actual_cost_usd) AS actual_cost_usd
  FROM sessions
  WHERE (:since IS NULL OR started_at >= :since) AND (:until IS NULL OR started_at < :until)
    AND (:source IS NULL OR source = :source) ${flagged ? UNFLAGGED : ""}
  GROUP BY 1 ORDER BY 1`;

const sqlByGroup = (flagged: boolean) => ({
  source: statsSql(GROUP_EXPRESSIONS.source, flagged),
  model: statsSql(GROUP_EXPRESSIONS.model, flagged),
  day: statsSql(GROUP_EXPRESSIONS.day, flagged),
});
const STATS_SQL = sqlByGroup(false);
const FLAGGED_STATS_SQL = sqlByGroup(true);

/**
 * Sessions, messages, every kind of token and cost, grouped by source, model or UTC day of
 * `started_at`; groups in ascending order (`null` first). On a newer agent's file, sessions it
 * flags archived or hidden are not counted unless `includeArchived` / `includeHidden`.
 */
export function usageStats(ctx: StoreContext, o: UsageStatsOptions): UsageStatsRow[] {
  const { groupBy, includeArchived, includeHidden, ...args } = usageStatsArguments(o);
  if (!ctx.reads?.sessionFlags) return ctx.conn.all<UsageStatsRow>(STATS_SQL[groupBy], [args]);
  const flags = { hide_archived: includeArchived ? 0 : 1, hide_hidden: includeHidden ? 0 : 1 };
  return ctx.conn.all<UsageStatsRow>(FLAGGED_STATS_SQL[groupBy], [{ ...args, ...flags }]);
}
