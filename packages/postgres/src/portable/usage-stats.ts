import {
  InvalidArgumentError,
  optionalBoolean,
  optionalNumber,
  optionalString,
  optionsObject,
  type UsageStatsOptions,
  type UsageStatsRow,
} from "@hermes/core";
import { sql } from "kysely";
import { listedSession } from "../operations/agent-visibility.js";
import type { PgStoreContext } from "../pg-store-context.js";

/**
 * Sessions, messages, tokens and cost grouped by source, model or UTC day; sessions flagged
 * archived or hidden (migrated from a newer agent's file) only with `includeArchived` /
 * `includeHidden`.
 */
export async function usageStats(ctx: PgStoreContext, o: UsageStatsOptions): Promise<UsageStatsRow[]> {
  const opts = optionsObject("options", o);
  const groupBy = opts.groupBy;
  if (groupBy !== "source" && groupBy !== "model" && groupBy !== "day") {
    throw new InvalidArgumentError("groupBy", "groupBy must be 'source', 'model' or 'day'");
  }
  const group =
    groupBy === "day"
      ? sql<string>`to_char(to_timestamp(started_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`
      : sql<string>`${sql.ref(groupBy)}`;
  const since = optionalNumber("since", opts.since);
  const until = optionalNumber("until", opts.until);
  const source = optionalString("source", opts.source);
  // Sessions migrated from a newer agent's file keep its flags: counted as the listings show them.
  const listed = listedSession("sessions", {
    includeArchived: optionalBoolean("includeArchived", opts.includeArchived, false),
    includeHidden: optionalBoolean("includeHidden", opts.includeHidden, false),
  });
  return ctx.read(
    (db) =>
      db
        .selectFrom("sessions")
        .select((eb) => {
          const total = (
            column:
              | "message_count"
              | "tool_call_count"
              | "api_call_count"
              | "input_tokens"
              | "output_tokens"
              | "cache_read_tokens"
              | "cache_write_tokens"
              | "reasoning_tokens",
          ) => eb.fn.coalesce(eb.fn.sum<number>(column), sql.lit(0));
          return [
            group.as("group"),
            eb.fn.countAll<number>().as("sessions"),
            total("message_count").as("messages"),
            total("tool_call_count").as("tool_calls"),
            total("api_call_count").as("api_calls"),
            total("input_tokens").as("input_tokens"),
            total("output_tokens").as("output_tokens"),
            total("cache_read_tokens").as("cache_read_tokens"),
            total("cache_write_tokens").as("cache_write_tokens"),
            total("reasoning_tokens").as("reasoning_tokens"),
            eb.fn.sum<number | null>("estimated_cost_usd").as("estimated_cost_usd"),
            eb.fn.sum<number | null>("actual_cost_usd").as("actual_cost_usd"),
          ];
        })
        .$if(since !== null, (qb) => qb.where("started_at", ">=", since!))
        .$if(until !== null, (qb) => qb.where("started_at", "<", until!))
        .$if(source !== null, (qb) => qb.where("source", "=", source!))
        .$if(listed !== null, (qb) => qb.where(listed!))
        .groupBy(sql`1`)
        // Groups sorted bytewise, no group (NULL) first, as SQLite sorts them.
        .orderBy(sql`${group} COLLATE "C" NULLS FIRST`)
        .execute() as Promise<UsageStatsRow[]>,
  );
}
