import {
  HermesStoreError,
  InvalidArgumentError,
  optionsObject,
  type SearchHit,
  type SearchIndexProgress,
  type SearchIndexReport,
  type SearchMessagesOptions,
  searchArguments,
} from "@hermes/core";
import {
  catchUpCjkIndex,
  planSearchWithinLimits,
  rebuildSearchIndexes,
  runSearch,
  type SearchPlan,
  verifySearchIndexes,
  withoutShortCjkIndex,
} from "@hermes/search";
import { mapSqliteError } from "../sqlite-errors.js";
import type { StoreContext } from "../store-context.js";

/** Why the short-CJK index could not be brought up to date, when a scan can still answer. */
const FALLBACK_CODES = new Set<string>(["STORE_BUSY", "STORE_READ_ONLY", "STORE_FULL"]);

function transaction(ctx: StoreContext) {
  return <T>(label: string, fn: () => T): Promise<T> => ctx.writes.run(label, fn);
}

/**
 * Full-text search over every message ([search_messages]); see `@hermes/search` for how a
 * query is planned. Queries are limited by `SEARCH_LIMITS` of `@hermes/core` (`INVALID_ARGUMENT` beyond them).
 * A query with one- or two-character CJK terms first brings the short-CJK index up to date
 * (creating it on first use), in short write transactions.
 */
export async function searchMessages(
  ctx: StoreContext,
  query: string,
  o?: SearchMessagesOptions,
): Promise<SearchHit[]> {
  const { sourceFilter, excludeSources, roleFilter, limit, offset } = searchArguments(query, o);
  const plan = planSearchWithinLimits(query);
  if (plan.kind === "empty") return [];

  try {
    let run: SearchPlan = plan;
    if (plan.kind === "substring" && plan.usesCjkIndex) {
      try {
        await catchUpCjkIndex(ctx.conn, transaction(ctx));
      } catch (error) {
        // An index we cannot bring up to date (read-only file, lock held past the deadline)
        // must not cost the answer: fall back to the reference's scan for the short terms.
        const mapped = mapSqliteError(error, ctx.path);
        if (!(mapped instanceof HermesStoreError) || !FALLBACK_CODES.has(mapped.code)) throw mapped;
        run = withoutShortCjkIndex(plan);
      }
    }
    return runSearch(ctx.conn, run, { sourceFilter, excludeSources, roleFilter, limit, offset });
  } catch (error) {
    throw mapSqliteError(error, ctx.path);
  }
}

/** State of every search index (reference FTS5 tables and the short-CJK index). */
export async function verifySearchIndex(ctx: StoreContext): Promise<SearchIndexReport> {
  try {
    return await verifySearchIndexes(ctx.conn, transaction(ctx));
  } catch (error) {
    throw mapSqliteError(error, ctx.path);
  }
}

/** Rebuilds every search index from `messages`, reporting progress per index. */
export async function rebuildSearchIndex(
  ctx: StoreContext,
  o?: { onProgress?: (progress: SearchIndexProgress) => void },
): Promise<void> {
  const opts = optionsObject("options", o);
  if (opts.onProgress !== undefined && typeof opts.onProgress !== "function") {
    throw new InvalidArgumentError("onProgress", "onProgress must be a function");
  }
  try {
    await rebuildSearchIndexes(ctx.conn, transaction(ctx), opts.onProgress);
  } catch (error) {
    throw mapSqliteError(error, ctx.path);
  }
}
