import type { SearchIndexProgress, SearchIndexReport, SearchIndexStatus } from "@hermes/core";
import type { SqlExecutor, TransactionRunner } from "@hermes/schema";
import { objectExists } from "@hermes/schema";
import { cjkGramDocument } from "./cjk-index/cjk-grams.js";
import {
  backfillCjkChunk,
  CJK_INDEX_TABLE,
  CJK_QUEUE_TABLE,
  CJK_STATE_TABLE,
  cjkBackfillState,
  cjkIndexNeedsUpgrade,
  cjkIndexPresence,
  cjkQueueDepth,
  cjkQueuePending,
  createCjkIndex,
  drainCjkQueue,
  dropCjkIndex,
} from "./cjk-index/cjk-index.js";
import {
  CJK_ORDER_TABLE,
  fillTimestampBlocksChunk,
  TS_BLOCK_SHIFT,
  TS_COARSE_SHIFT,
  timestampBlocksFill,
} from "./cjk-index/timestamp-blocks.js";
import { FTS_TABLE, FTS_TRIGGERS, ftsTableScript, TRIGRAM_TABLE } from "./fts-ddl.js";

// The report types are the session-store contract's (`@hermes/core`), re-exported here.
export type { SearchIndexProgress, SearchIndexReport, SearchIndexStatus };

/** Messages indexed per write transaction while building or catching up the short-CJK index. */
export const CJK_INDEX_CHUNK = 2_000;

/**
 * Message ids covered per write transaction while filling the timestamp blocks: one rowid
 * range read of `messages` and a `GROUP BY`. 5,000 keeps the write lock well under the
 * reference's one-second retry window (figures in docs/design/write-path.md).
 */
export const TS_BLOCKS_CHUNK = 5_000;

/** How {@link catchUpCjkIndex} paces its write transactions. */
export interface CjkCatchUpOptions {
  /**
   * Messages (or queued changes) per write transaction (default {@link CJK_INDEX_CHUNK}); a
   * function is asked before each transaction (a size adapted to how long the last one took).
   */
  readonly chunk?: number | (() => number);
  /** Message ids per transaction of the timestamp-block fill (default {@link TS_BLOCKS_CHUNK}). */
  readonly tsChunk?: number;
  /**
   * Awaited before each backfill, fill and catch-up transaction: a pause that lets other writers
   * in, and the place to stop (what it throws ends the catch-up; every committed step is kept).
   */
  readonly between?: () => Promise<void>;
}

/**
 * Brings the short-CJK index up to date: creates it when missing (or upgrades one built by an
 * earlier version), finishes its backfill and the fill of its timestamp blocks, and applies
 * every queued change, in write transactions of {@link CJK_INDEX_CHUNK} messages (blocks:
 * {@link TS_BLOCKS_CHUNK} ids) so other writers (the reference retries for only ~1 s) get the
 * lock in between.
 */
export async function catchUpCjkIndex(
  db: SqlExecutor,
  transaction: TransactionRunner,
  onProgress?: (p: SearchIndexProgress) => void,
  o: CjkCatchUpOptions = {},
): Promise<void> {
  const size = o.chunk ?? CJK_INDEX_CHUNK;
  const chunk = typeof size === "function" ? size : () => size;
  const tsChunk = o.tsChunk ?? TS_BLOCKS_CHUNK;
  const between = o.between ?? (async () => {});
  if (cjkIndexPresence(db) !== "present" || cjkIndexNeedsUpgrade(db)) {
    await transaction("search:create-cjk-index", () => createCjkIndex(db));
  }
  const state = cjkBackfillState(db);
  if (state !== null && state.next < state.end) {
    let done = 0;
    let total = -1;
    for (;;) {
      await between();
      const n = chunk();
      const step = await transaction("search:backfill-cjk-index", () => backfillCjkChunk(db, n));
      done += step.done;
      if (total < 0) total = done + step.remaining;
      onProgress?.({ index: CJK_INDEX_TABLE, done, total: Math.max(total, done) });
      if (step.remaining === 0) break;
    }
  }
  const fill = timestampBlocksFill(db, CJK_STATE_TABLE);
  if (fill !== null && fill.next < fill.end) {
    let done = 0;
    const total = fill.end - fill.next;
    for (;;) {
      await between();
      const step = await transaction("search:fill-cjk-ts-blocks", () =>
        fillTimestampBlocksChunk(db, CJK_STATE_TABLE, tsChunk),
      );
      done += step.done;
      onProgress?.({ index: CJK_ORDER_TABLE, done, total: Math.max(total, done) });
      if (step.remaining === 0) break;
    }
  }
  while (cjkQueuePending(db)) {
    await between();
    const n = chunk();
    await transaction("search:catch-up-cjk-index", () => drainCjkQueue(db, n));
  }
}

/**
 * FTS5's `integrity-check` command, or on a read-only connection (where that `INSERT` is
 * refused) `PRAGMA integrity_check(table)`, which runs FTS5's own check of its structure but
 * cannot compare the index with `messages`.
 */
function integrityError(
  db: SqlExecutor,
  table: string,
  withContent: boolean,
  readOnly = false,
): string | null {
  try {
    if (readOnly) {
      const rows = db.all<{ integrity_check: string }>(`PRAGMA integrity_check(${table})`);
      const found = rows.map((r) => r.integrity_check).filter((r) => r !== "ok");
      return found.length === 0 ? null : found.join("; ");
    }
    db.run(`INSERT INTO ${table}(${table}, rank) VALUES ('integrity-check', ?)`, [withContent ? 1 : 0]);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function verifyReferenceTable(
  db: SqlExecutor,
  table: typeof FTS_TABLE | typeof TRIGRAM_TABLE,
  readOnly = false,
): SearchIndexStatus {
  const kind = table === FTS_TABLE ? "unicode61" : "trigram";
  if (!objectExists(db, "table", table)) {
    return { name: table, kind, status: "missing", detail: `table ${table} does not exist` };
  }
  const triggers = ["insert", "delete", "update"].map((op) => `${table}_${op}`);
  const absent = triggers.filter((t) => !(t in FTS_TRIGGERS) || !objectExists(db, "trigger", t));
  if (absent.length > 0) {
    return { name: table, kind, status: "missing", detail: `trigger(s) ${absent.join(", ")} missing` };
  }
  // rank = 1 also compares the index with the content table (`messages`).
  const error = integrityError(db, table, true, readOnly);
  if (error !== null) return { name: table, kind, status: "damaged", detail: error };
  return readOnly
    ? { name: table, kind, status: "ok", detail: "structure checked read-only (not compared with messages)" }
    : { name: table, kind, status: "ok" };
}

const SAMPLE = 256;
const MAX_TOKENS_CHECKED = 32;

function verifyCjkIndex(db: SqlExecutor, readOnly = false): SearchIndexStatus {
  const base = { name: CJK_INDEX_TABLE, kind: "short-cjk" } as const;
  const presence = cjkIndexPresence(db);
  if (presence === "absent") return { ...base, status: "not-built" };
  if (presence === "partial") {
    return { ...base, status: "damaged", detail: "some of its tables or triggers are missing" };
  }
  const error = integrityError(db, CJK_INDEX_TABLE, false, readOnly);
  if (error !== null) return { ...base, status: "damaged", detail: error };
  const pending = cjkQueueDepth(db);
  const state = cjkBackfillState(db);
  if (state === null) return { ...base, status: "damaged", detail: "backfill state is missing" };
  if (state.next < state.end) return { ...base, status: "building", pending };
  // An index from an earlier version, upgraded on its next use; or its blocks half filled.
  const fill = timestampBlocksFill(db, CJK_STATE_TABLE);
  if (cjkIndexNeedsUpgrade(db) || fill === null || fill.next < fill.end) {
    return { ...base, status: "building", pending };
  }
  // A sample of messages that are neither queued nor waiting for the backfill must be indexed
  // exactly: every gram of theirs present, and no entry at all for a message without CJK text.
  const rows = db.all<{
    id: number;
    bounded: number;
    content: string | null;
    tool_calls: string | null;
    tool_name: string | null;
  }>(
    // `bounded`: both levels of the timestamp blocks hold a bound at least the message's.
    `SELECT id, content, tool_calls, tool_name, (m.timestamp IS NULL OR (SELECT count(*) FROM ${CJK_ORDER_TABLE} b WHERE ((b.level = 0 AND b.block = m.id >> ${TS_BLOCK_SHIFT}) OR (b.level = 1 AND b.block = m.id >> ${TS_BLOCK_SHIFT + TS_COARSE_SHIFT})) AND b.max_ts >= m.timestamp) = 2) AS bounded FROM messages m WHERE id IN (SELECT id FROM messages ORDER BY random() LIMIT ${SAMPLE}) AND id NOT IN (SELECT message_id FROM ${CJK_QUEUE_TABLE})`,
  );
  for (const row of rows) {
    if (row.bounded !== 1) {
      return { ...base, status: "damaged", detail: `message ${row.id} is above its timestamp block's bound` };
    }
    const doc = cjkGramDocument([row.content, row.tool_calls, row.tool_name]);
    const indexed = db.get(`SELECT 1 AS x FROM ${CJK_INDEX_TABLE} WHERE rowid = ?`, [row.id]) !== undefined;
    if (doc === null) {
      if (indexed)
        return { ...base, status: "damaged", detail: `message ${row.id} is indexed but has no CJK text` };
      continue;
    }
    const match = doc.split(" ").slice(0, MAX_TOKENS_CHECKED).join(" AND ");
    const found =
      db.get(`SELECT 1 AS x FROM ${CJK_INDEX_TABLE} WHERE ${CJK_INDEX_TABLE} MATCH ? AND rowid = ?`, [
        match,
        row.id,
      ]) !== undefined;
    if (!found) return { ...base, status: "damaged", detail: `message ${row.id} is missing from the index` };
  }
  return pending > 0 ? { ...base, status: "behind", pending } : { ...base, status: "ok", pending: 0 };
}

/**
 * Checks every search index: the reference's two FTS5 tables (tables and triggers present,
 * FTS5 `integrity-check` against `messages`) and the short-CJK index (objects present,
 * backfill complete, queue depth, a sample of messages indexed exactly).
 * FTS5's check is an `INSERT` command, so it runs in a write transaction; with `readOnly`
 * (`transaction` may then be a plain read) FTS5's structure is checked by
 * `PRAGMA integrity_check` instead, without the comparison with `messages`.
 */
export async function verifySearchIndexes(
  db: SqlExecutor,
  transaction: TransactionRunner,
  o: { readOnly?: boolean } = {},
): Promise<SearchIndexReport> {
  const readOnly = o.readOnly === true;
  const indexes = await transaction("search:verify", () => [
    verifyReferenceTable(db, FTS_TABLE, readOnly),
    verifyReferenceTable(db, TRIGRAM_TABLE, readOnly),
    verifyCjkIndex(db, readOnly),
  ]);
  return { ok: indexes.every((i) => i.status !== "missing" && i.status !== "damaged"), indexes };
}

/**
 * Rebuilds every search index from `messages`: each reference FTS5 table (re-created with its
 * triggers when missing) with FTS5's `rebuild` command, one write transaction per table; then
 * the short-CJK index, dropped and rebuilt in chunks. Progress is reported per index.
 */
export async function rebuildSearchIndexes(
  db: SqlExecutor,
  transaction: TransactionRunner,
  onProgress?: (p: SearchIndexProgress) => void,
): Promise<void> {
  const total = db.get<{ n: number }>("SELECT COUNT(*) AS n FROM messages")?.n ?? 0;
  for (const table of [FTS_TABLE, TRIGRAM_TABLE] as const) {
    onProgress?.({ index: table, done: 0, total });
    await transaction(`search:rebuild-${table}`, () => {
      for (const sql of ftsTableScript(table)) db.exec(sql);
      db.run(`INSERT INTO ${table}(${table}) VALUES ('rebuild')`);
    });
    onProgress?.({ index: table, done: total, total });
  }
  await transaction("search:drop-cjk-index", () => {
    dropCjkIndex(db);
    createCjkIndex(db);
  });
  onProgress?.({ index: CJK_INDEX_TABLE, done: 0, total });
  await catchUpCjkIndex(db, transaction, onProgress);
}
