import { InvalidArgumentError } from "../errors/hermes-store-error.js";
import { optionalBoolean, optionalNumber, optionalString, optionsObject } from "../validation/arguments.js";

/** Options of `usageStats`. */
export interface UsageStatsOptions {
  /** One row per source, per model (`null` for sessions without one) or per UTC day (`YYYY-MM-DD`). */
  groupBy: "source" | "model" | "day";
  /** Sessions started at or after this time (Unix epoch seconds). */
  since?: number;
  /** Sessions started before this time (Unix epoch seconds). */
  until?: number;
  /** Only sessions of this source. */
  source?: string;
  /**
   * A newer agent's file: also count sessions it flags archived (left out by default, so the
   * figures are those of what the listings show). No effect where the database has no such flag.
   */
  includeArchived?: boolean;
  /** A newer agent's file: also count sessions it flags hidden (left out by default, as the listings do). */
  includeHidden?: boolean;
  /** Aborts the call with `ABORTED` (`AbortedError`); see `SearchMessagesOptions.signal`. */
  signal?: AbortSignal;
}

/** Usage of one group of sessions, from the sessions' counters. */
export interface UsageStatsRow {
  /** The source, the model or the UTC day. */
  group: string | null;
  sessions: number;
  /** Sum of `message_count`. */
  messages: number;
  tool_calls: number;
  api_calls: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  /** Sum over sessions with an estimate; `null` when none has one. */
  estimated_cost_usd: number | null;
  /** Sum over sessions with an actual cost; `null` when none has one. */
  actual_cost_usd: number | null;
}

/** The checked arguments of `usageStats` (`null` where a filter is absent). */
export interface UsageStatsArguments {
  groupBy: UsageStatsOptions["groupBy"];
  since: number | null;
  until: number | null;
  source: string | null;
  includeArchived: boolean;
  includeHidden: boolean;
}

/** Checks the arguments of `usageStats` (`INVALID_ARGUMENT`). */
export function usageStatsArguments(o: UsageStatsOptions): UsageStatsArguments {
  const opts = optionsObject("options", o);
  const groupBy = opts.groupBy;
  if (groupBy !== "source" && groupBy !== "model" && groupBy !== "day") {
    throw new InvalidArgumentError("groupBy", "groupBy must be 'source', 'model' or 'day'");
  }
  return {
    groupBy,
    since: optionalNumber("since", opts.since),
    until: optionalNumber("until", opts.until),
    source: optionalString("source", opts.source),
    includeArchived: optionalBoolean("includeArchived", opts.includeArchived, false),
    includeHidden: optionalBoolean("includeHidden", opts.includeHidden, false),
  };
}
