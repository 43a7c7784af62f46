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
  cjkIndexNeedsUpgrade,
  cjkIndexPresence,
  cjkOrderUsable,
  cjkQueuedIds,
  planSearchWithinLimits,
  rebuildSearchIndexes,
  runSearch,
  type SearchPlan,
  verifySearchIndexes,
  withoutShortCjkIndex,
  withQueuedCjkRows,
} from "@hermes/search";
import { DatabaseConnection } from "../database-connection.js";
import { excludedSessionsView } from "../file-views.js";
import { DEFAULT_SNAPSHOT_MAX_BYTES } from "../open-read-only-store.js";
import { readSnapshot } from "../read-snapshot.js";
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
 * A query with one- or two-character CJK terms uses the short-CJK index when it is current, or
 * after a small catch-up inline; when more is left (first build of a big file, a large backlog)
 * the index is caught up on a worker thread (`side-index/`) and meanwhile read around its queue
 * (`behindIndexPlan`), or the terms scanned while it is incomplete. On a newer agent's file, sessions it
 * flags hidden or archived are left out, as the listings leave them out, unless `includeHidden`
 * / `includeArchived`; rows it no longer displays (rewound, superseded) are never searched.
 */
export async function searchMessages(
  ctx: StoreContext,
  query: string,
  o?: SearchMessagesOptions,
): Promise<SearchHit[]> {
  const args = searchArguments(query, o);
  const { sourceFilter, excludeSources, roleFilter, limit, offset } = args;
  const plan = planSearchWithinLimits(query);
  if (plan.kind === "empty") return [];

  const excludedSessions = excludedSessionsView(ctx.reads, args);
  const filters = {
    sourceFilter,
    excludeSources,
    roleFilter,
    limit,
    offset,
    ...(ctx.reads ? { sessionsView: true } : {}),
    ...(excludedSessions === undefined ? {} : { excludedSessions }),
  };
  try {
    let current = true;
    if (plan.kind === "substring" && plan.usesCjkIndex && ctx.readOnly) {
      // A read-only store adds nothing to the file: the short-CJK index is used when it is
      // there and caught up (built by a writable store earlier), else read around its queue.
      current = cjkIndexCurrent(ctx);
    } else if (plan.kind === "substring" && plan.usesCjkIndex) {
      try {
        if (ctx.cjkIndex === undefined) await catchUpCjkIndex(ctx.conn, transaction(ctx));
        else current = await ctx.cjkIndex.prepare(transaction(ctx));
      } catch (error) {
        // An index we cannot bring up to date (read-only file, lock held past the deadline)
        // must not cost the answer: read around its queue, or scan for the short terms.
        const mapped = mapSqliteError(error, ctx.path);
        if (!(mapped instanceof HermesStoreError) || !FALLBACK_CODES.has(mapped.code)) throw mapped;
        current = false;
      }
    }
    const hits = current
      ? runSearch(ctx.conn, plan, filters)
      : readSnapshot(ctx, () => runSearch(ctx.conn, behindIndexPlan(ctx, plan), filters));
    return withMessageUids(ctx, hits);
  } catch (error) {
    throw mapSqliteError(error, ctx.path);
  }
}

/** Hits with their `message_uid` where the file has the column (v31); others as they are. */
function withMessageUids(ctx: StoreContext, hits: SearchHit[]): SearchHit[] {
  const uidSql = ctx.reads?.messageUidsSql;
  if (!uidSql || hits.length === 0) return hits;
  const rows = ctx.conn.all<{ id: number; message_uid: string | null }>(uidSql, [
    JSON.stringify(hits.map((h) => h.id)),
  ]);
  const uids = new Map(rows.map((r) => [r.id, r.message_uid]));
  for (const hit of hits) hit.message_uid = uids.get(hit.id) ?? null;
  return hits;
}

/** Most queued changes a search reads around (a `LIKE` on each queued row); more: a scan. */
const CJK_QUEUE_READ_MAX = 20_000;

/**
 * A plan for a short-CJK index that cannot be brought up to date now: its matches for every
 * message not queued plus the queued rows tested with `LIKE`, when the index is complete but
 * for its queue (`cjkQueuedIds`); else the reference's scan. Call it in the search's snapshot.
 */
function behindIndexPlan(ctx: StoreContext, plan: SearchPlan): SearchPlan {
  const queued = cjkQueuedIds(ctx.conn, CJK_QUEUE_READ_MAX);
  return queued === null ? withoutShortCjkIndex(plan) : withQueuedCjkRows(plan, queued);
}

/**
 * A search of short CJK terms by the store's writer thread: their index is brought up to date
 * (a write) and the search runs here, on the index, current. `null` when the index cannot serve
 * them now (a build runs, or starts here): read around its queue or scanned, a read that a read worker can
 * run as well as the writer (whose other writes would wait meanwhile).
 */
export async function searchWithCjkIndex(
  ctx: StoreContext,
  query: string,
  o?: SearchMessagesOptions,
): Promise<SearchHit[] | null> {
  if (ctx.cjkIndex !== undefined && (await ctx.cjkIndex.scanInWorker(query, transaction(ctx)))) return null;
  return searchMessages(ctx, query, o);
}

/**
 * Whether the short-CJK index can answer without being written: built, of this version, its
 * backfill and timestamp blocks complete and nothing queued (`cjkOrderUsable`).
 */
function cjkIndexCurrent(ctx: StoreContext): boolean {
  const db = ctx.conn;
  return cjkIndexPresence(db) === "present" && !cjkIndexNeedsUpgrade(db) && cjkOrderUsable(db);
}

/** Largest file a read-only store copies into memory to check its search indexes in full. */
const MAX_CHECK_COPY_BYTES = DEFAULT_SNAPSHOT_MAX_BYTES;

/** A writable in-memory copy of the file as this read-only store sees it, or `null` when too large. */
function inMemoryCopy(ctx: StoreContext): DatabaseConnection | null {
  const db = ctx.conn.db;
  const bytes =
    Number(db.pragma("page_count", { simple: true })) * Number(db.pragma("page_size", { simple: true }));
  if (bytes > MAX_CHECK_COPY_BYTES) return null;
  const image = db.serialize();
  // An in-memory database has no WAL: the header must say "rollback journal".
  image[18] = 1;
  image[19] = 1;
  return new DatabaseConnection(ctx.path, {
    busyTimeoutMs: 0,
    synchronous: "OFF",
    journalSizeLimit: 0,
    readOnly: false,
    image,
  });
}

/** State of every search index (reference FTS5 tables and the short-CJK index). */
export async function verifySearchIndex(ctx: StoreContext): Promise<SearchIndexReport> {
  try {
    if (ctx.readOnly) {
      // FTS5's full check (the index against messages) is an INSERT command: it runs on an
      // in-memory copy of the file, which nothing else sees; a file too large to copy gets
      // FTS5's structural check, which a read-only connection can run.
      const copy = inMemoryCopy(ctx);
      if (copy === null) {
        return await verifySearchIndexes(ctx.conn, async (_label, fn) => readSnapshot(ctx, fn), {
          readOnly: true,
        });
      }
      try {
        return await verifySearchIndexes(copy, async (_label, fn) => fn());
      } finally {
        copy.close();
      }
    }
    return await verifySearchIndexes(ctx.conn, transaction(ctx));
  } catch (error) {
    throw mapSqliteError(error, ctx.path);
  }
}

/** Options of `rebuildSearchIndex`. */
export interface RebuildOptions {
  onProgress?: (progress: SearchIndexProgress) => void;
}

/** `rebuildSearchIndex`'s options, checked. */
export function rebuildArguments(o?: RebuildOptions): RebuildOptions {
  const opts = optionsObject("options", o);
  if (opts.onProgress !== undefined && typeof opts.onProgress !== "function") {
    throw new InvalidArgumentError("onProgress", "onProgress must be a function");
  }
  return opts;
}

/** Rebuilds every search index from `messages`, reporting progress per index. */
export async function rebuildSearchIndex(ctx: StoreContext, o?: RebuildOptions): Promise<void> {
  const opts = rebuildArguments(o);
  try {
    await rebuildSearchIndexes(ctx.conn, transaction(ctx), opts.onProgress);
  } catch (error) {
    throw mapSqliteError(error, ctx.path);
  }
}
