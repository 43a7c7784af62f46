import { InvalidArgumentError } from "../errors/hermes-store-error.js";
import { nonNegativeInt, optionsObject, requireId } from "../validation/arguments.js";

/** Options of `iterMessages`. */
export interface IterMessagesOptions {
  /** Start after this message (a cursor: the `id` of the last message already seen). */
  afterId?: number;
  /** Yield at most this many messages (default: all). */
  limit?: number;
  /** Messages read per query (default 500). */
  pageSize?: number;
  /**
   * Aborts the iteration: its next step rejects with `ABORTED` (`AbortedError`). The SQLite
   * store checks it before starting, and ends the read worker running the query when it aborts
   * mid-query (the rejection follows within milliseconds); a backend may only check it between steps.
   */
  signal?: AbortSignal;
}

/**
 * Checks the arguments of `iterMessages` (`INVALID_ARGUMENT`): the session id, `limit`
 * (default: all), `pageSize` (1–100,000, default 500) and the `afterId` cursor.
 */
export function iterMessagesArguments(
  sessionId: unknown,
  o: IterMessagesOptions | undefined,
): { id: string; limit: number; pageSize: number; afterId: number | undefined } {
  const id = requireId("sessionId", sessionId);
  const opts = optionsObject("options", o);
  const limit = nonNegativeInt("limit", opts.limit, Number.MAX_SAFE_INTEGER);
  const pageSize = nonNegativeInt("pageSize", opts.pageSize, 500, 100_000);
  if (pageSize === 0) throw new InvalidArgumentError("pageSize", "pageSize must be at least 1");
  const afterId = opts.afterId;
  if (afterId !== undefined && (typeof afterId !== "number" || !Number.isSafeInteger(afterId))) {
    throw new InvalidArgumentError("afterId", "afterId must be an integer message id");
  }
  return { id, limit, pageSize, afterId };
}
