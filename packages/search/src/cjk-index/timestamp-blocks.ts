import type { SqlExecutor } from "@hermes/schema";
import { objectExists } from "@hermes/schema";

/**
 * Upper bounds of `messages.timestamp` per block of message ids, so that a newest-first page
 * (the reference's `ORDER BY timestamp DESC`) can be read off an index in id order and stop
 * early, with a proof that no message further down could rank higher (see `newest-first.ts`).
 *
 * Two levels, one table: level 0 holds the largest timestamp of each block of 256 ids
 * (`id >> 8`), level 1 of each block of 65,536 ids (`id >> 16`), so the bound of everything
 * below an id reads at most ~270 rows whatever the file size.
 *
 * Only ever raised (`max(max_ts, new)`): a deleted message or a timestamp changed downwards
 * leaves the bound valid, just looser. It is maintained with the short-CJK index (backfill and
 * queue), so it covers every message once the index is caught up; the values are SQLite's own
 * (any storage class, compared by SQLite, never by JavaScript).
 */
export const CJK_ORDER_TABLE = "hermes_search_ts_blocks";

/** Ids per level-0 block, as a shift: 256. */
export const TS_BLOCK_SHIFT = 8;
/** Level-0 blocks per level-1 block, as a shift: 256 (65,536 ids). */
export const TS_COARSE_SHIFT = 8;

/** The statement that creates the table. */
export const CJK_ORDER_DDL = `CREATE TABLE IF NOT EXISTS ${CJK_ORDER_TABLE} (level INTEGER NOT NULL, block INTEGER NOT NULL, max_ts NOT NULL, PRIMARY KEY (level, block)) WITHOUT ROWID`;

const RAISE = "ON CONFLICT(level, block) DO UPDATE SET max_ts = max(max_ts, excluded.max_ts)";

/**
 * Raises the bounds of the blocks of messages `lo < id <= hi` to their current timestamps
 * (both levels); run inside a write transaction. Reads `messages` by rowid range only.
 */
export function raiseTimestampBlocks(db: SqlExecutor, lo: number, hi: number): void {
  db.run(
    `INSERT INTO ${CJK_ORDER_TABLE}(level, block, max_ts) SELECT 0, id >> ${TS_BLOCK_SHIFT}, max(timestamp) FROM messages WHERE id > ? AND id <= ? AND timestamp IS NOT NULL GROUP BY id >> ${TS_BLOCK_SHIFT} ${RAISE}`,
    [lo, hi],
  );
  db.run(
    `INSERT INTO ${CJK_ORDER_TABLE}(level, block, max_ts) SELECT 1, block >> ${TS_COARSE_SHIFT}, max(max_ts) FROM ${CJK_ORDER_TABLE} WHERE level = 0 AND block >= ? AND block <= ? GROUP BY block >> ${TS_COARSE_SHIFT} ${RAISE}`,
    [Math.max(0, lo + 1) >> TS_BLOCK_SHIFT, Math.max(0, hi) >> TS_BLOCK_SHIFT],
  );
}

/**
 * Raises the bounds of the blocks of the given messages (ids that no longer exist are
 * skipped); run inside a write transaction. Two statements however many ids.
 */
export function raiseTimestampBlocksOf(db: SqlExecutor, ids: readonly number[]): void {
  if (ids.length === 0) return;
  const json = JSON.stringify(ids);
  for (const [level, shift] of [
    [0, TS_BLOCK_SHIFT],
    [1, TS_BLOCK_SHIFT + TS_COARSE_SHIFT],
  ] as const) {
    db.run(
      `INSERT INTO ${CJK_ORDER_TABLE}(level, block, max_ts) SELECT ${level}, id >> ${shift}, max(timestamp) FROM messages WHERE id IN (SELECT value FROM json_each(?)) AND timestamp IS NOT NULL GROUP BY id >> ${shift} ${RAISE}`,
      [json],
    );
  }
}

/** Fill progress of the table for messages that existed when it was created. */
export interface TimestampBlocksFill {
  /** Messages with an id up to `next` are covered. */
  readonly next: number;
  /** Last id to cover (later ids come through the queue). */
  readonly end: number;
}

/** Fill progress, or `null` when the table or its state is missing. */
export function timestampBlocksFill(db: SqlExecutor, stateTable: string): TimestampBlocksFill | null {
  if (!objectExists(db, "table", CJK_ORDER_TABLE) || !objectExists(db, "table", stateTable)) return null;
  const rows = db.all<{ key: string; value: number }>(
    `SELECT key, value FROM ${stateTable} WHERE key IN ('ts_blocks_next', 'ts_blocks_end')`,
  );
  const next = rows.find((r) => r.key === "ts_blocks_next")?.value;
  const end = rows.find((r) => r.key === "ts_blocks_end")?.value;
  return next === undefined || end === undefined ? null : { next, end };
}

/**
 * Covers the next `chunk` ids of the fill range; run inside a write transaction. Returns how
 * far the range advanced and how much is left, in ids.
 */
export function fillTimestampBlocksChunk(
  db: SqlExecutor,
  stateTable: string,
  chunk: number,
): { done: number; remaining: number } {
  const fill = timestampBlocksFill(db, stateTable);
  if (fill === null || fill.next >= fill.end) return { done: 0, remaining: 0 };
  const hi = Math.min(fill.end, fill.next + chunk);
  raiseTimestampBlocks(db, fill.next, hi);
  db.run(`UPDATE ${stateTable} SET value = ? WHERE key = 'ts_blocks_next'`, [hi]);
  return { done: hi - fill.next, remaining: fill.end - hi };
}

/**
 * SQL of the bound: the largest timestamp of any message with an id in a level-0 block up to
 * and including `?` (a block index); `NULL` when there is none. Parameters: the block index
 * three times.
 */
export const TIMESTAMP_BOUND_SQL =
  `SELECT max(t) AS bound FROM (SELECT max(max_ts) AS t FROM ${CJK_ORDER_TABLE} WHERE level = 1 AND block < (? >> ${TS_COARSE_SHIFT}) ` +
  `UNION ALL SELECT max(max_ts) FROM ${CJK_ORDER_TABLE} WHERE level = 0 AND block >= ((? >> ${TS_COARSE_SHIFT}) << ${TS_COARSE_SHIFT}) AND block <= ?)`;
