import type { SqlExecutor } from "@hermes/schema";
import { objectExists } from "@hermes/schema";
import { cjkGramDocument } from "./cjk-grams.js";
import {
  CJK_ORDER_DDL,
  CJK_ORDER_TABLE,
  raiseTimestampBlocks,
  raiseTimestampBlocksOf,
  timestampBlocksFill,
} from "./timestamp-blocks.js";

/**
 * The short-CJK index: an index of our own that serves one- and two-character CJK terms,
 * which neither reference table can (unicode61 keeps a run of CJK text as one token; trigram
 * needs three characters), so the reference scans every message with `LIKE`.
 *
 * - `hermes_search_cjk`: a contentless FTS5 table (`detail=none`, rowid = `messages.id`) whose
 *   words are the CJK unigrams and bigrams of each message ({@link cjkGramDocument}). Contentless
 *   with `detail=none` keeps it small: a posting is a rowid delta.
 * - `hermes_search_queue`: ids of messages inserted, changed or deleted since the index last
 *   caught up, filled by plain-SQL triggers. The triggers call no function of ours, so the
 *   reference (or any SQLite client) can keep writing `messages`; we catch up from the queue
 *   before a query needs the index.
 * - `hermes_search_state`: backfill progress, so a build interrupted midway resumes.
 * - `hermes_search_ts_blocks`: upper bounds of the timestamps per block of ids, so the newest
 *   matches can be read off the index in id order with an early stop (`timestamp-blocks.ts`).
 *   Added after the first release: a file whose index predates it gets it, filled in chunks,
 *   the next time the index is caught up.
 *
 * None of this exists in a fresh file: it is created the first time a short CJK term is
 * searched (or by `rebuildSearchIndex`), which keeps new files and the reference's own files
 * schema-identical to the reference until then. The reference ignores these objects.
 */
export const CJK_INDEX_TABLE = "hermes_search_cjk";
export const CJK_QUEUE_TABLE = "hermes_search_queue";
export const CJK_STATE_TABLE = "hermes_search_state";

/** The statements that create the short-CJK index (all `IF NOT EXISTS`). */
export const CJK_INDEX_DDL: Readonly<Record<string, string>> = {
  [CJK_INDEX_TABLE]: `CREATE VIRTUAL TABLE IF NOT EXISTS ${CJK_INDEX_TABLE} USING fts5(grams, content='', contentless_delete=1, detail=none, tokenize='ascii')`,
  [CJK_QUEUE_TABLE]: `CREATE TABLE IF NOT EXISTS ${CJK_QUEUE_TABLE} (message_id INTEGER NOT NULL)`,
  [CJK_STATE_TABLE]: `CREATE TABLE IF NOT EXISTS ${CJK_STATE_TABLE} (key TEXT PRIMARY KEY, value INTEGER NOT NULL)`,
  [CJK_ORDER_TABLE]: CJK_ORDER_DDL,
};

/** Objects whose absence means the index was never built (the timestamp blocks came later). */
const CORE_OBJECTS = [CJK_INDEX_TABLE, CJK_QUEUE_TABLE, CJK_STATE_TABLE];

/** Plain-SQL triggers that queue every change of `messages` for the short-CJK index. */
export const CJK_INDEX_TRIGGERS: Readonly<Record<string, string>> = {
  hermes_search_queue_insert: `CREATE TRIGGER IF NOT EXISTS hermes_search_queue_insert AFTER INSERT ON messages BEGIN
    INSERT INTO ${CJK_QUEUE_TABLE}(message_id) VALUES (new.id);
END`,
  hermes_search_queue_update: `CREATE TRIGGER IF NOT EXISTS hermes_search_queue_update AFTER UPDATE OF id, content, tool_calls, tool_name, timestamp ON messages BEGIN
    INSERT INTO ${CJK_QUEUE_TABLE}(message_id) VALUES (old.id);
    INSERT INTO ${CJK_QUEUE_TABLE}(message_id) VALUES (new.id);
END`,
  hermes_search_queue_delete: `CREATE TRIGGER IF NOT EXISTS hermes_search_queue_delete AFTER DELETE ON messages BEGIN
    INSERT INTO ${CJK_QUEUE_TABLE}(message_id) VALUES (old.id);
END`,
};

/** How far the short-CJK index is built. */
export type CjkIndexPresence = "absent" | "partial" | "present";

/**
 * Whether the index objects exist: all of them, some of them (damaged), or none. The
 * timestamp blocks do not count: an index built before they existed is `present`, and gets
 * them when it is next caught up ({@link cjkIndexNeedsUpgrade}).
 */
export function cjkIndexPresence(db: SqlExecutor): CjkIndexPresence {
  const names = [...CORE_OBJECTS, ...Object.keys(CJK_INDEX_TRIGGERS)];
  const rows = db.all<{ name: string }>(
    `SELECT name FROM sqlite_master WHERE name IN (${names.map(() => "?").join(", ")})`,
    names,
  );
  if (rows.length === 0) return "absent";
  return rows.length === names.length ? "present" : "partial";
}

/**
 * Creates whatever is missing of the index and records the backfill range (every message up
 * to the current last id); messages written from now on reach the queue through the
 * triggers. Run inside one write transaction, so no message falls between the two.
 *
 * Also upgrades an index built before the timestamp blocks existed: the table is created and
 * its fill range recorded (every message up to the current last id), and the flag of the
 * ordering shortcut that preceded it is dropped.
 */
export function createCjkIndex(db: SqlExecutor): void {
  for (const sql of Object.values(CJK_INDEX_DDL)) db.exec(sql);
  // An earlier version's update trigger did not queue timestamp changes, which the bounds
  // must see: replace any trigger whose text is not the current one.
  for (const name of outdatedTriggers(db)) db.exec(`DROP TRIGGER ${name}`);
  for (const sql of Object.values(CJK_INDEX_TRIGGERS)) db.exec(sql);
  const max = db.get<{ hi: number | null }>("SELECT MAX(id) AS hi FROM messages")?.hi ?? 0;
  const fresh = cjkBackfillState(db) === null;
  db.run(`INSERT OR IGNORE INTO ${CJK_STATE_TABLE}(key, value) VALUES ('backfill_next', 0)`);
  db.run(`INSERT OR IGNORE INTO ${CJK_STATE_TABLE}(key, value) VALUES ('backfill_end', ?)`, [max]);
  // A fresh build raises the blocks as its backfill goes; an upgraded index covers every
  // message that exists now with a fill of its own (later ones come through the queue).
  db.run(`INSERT OR IGNORE INTO ${CJK_STATE_TABLE}(key, value) VALUES ('ts_blocks_next', 0)`);
  db.run(`INSERT OR IGNORE INTO ${CJK_STATE_TABLE}(key, value) VALUES ('ts_blocks_end', ?)`, [
    fresh ? 0 : max,
  ]);
  db.run(`DELETE FROM ${CJK_STATE_TABLE} WHERE key = 'ts_monotonic'`);
}

/** Our triggers that exist with another text than the current one. */
function outdatedTriggers(db: SqlExecutor): string[] {
  const rows = db.all<{ name: string; sql: string }>(
    `SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN (${Object.keys(CJK_INDEX_TRIGGERS)
      .map(() => "?")
      .join(", ")})`,
    Object.keys(CJK_INDEX_TRIGGERS),
  );
  // SQLite stores the statement without its IF NOT EXISTS.
  return rows
    .filter((r) => r.sql !== CJK_INDEX_TRIGGERS[r.name]?.replace("IF NOT EXISTS ", ""))
    .map((r) => r.name);
}

/**
 * Whether an existing index was built by an earlier version: without the timestamp blocks,
 * or with a trigger of another text. {@link createCjkIndex} upgrades it.
 */
export function cjkIndexNeedsUpgrade(db: SqlExecutor): boolean {
  return timestampBlocksFill(db, CJK_STATE_TABLE) === null || outdatedTriggers(db).length > 0;
}

/**
 * Whether the timestamp blocks bound every message right now: the backfill (which raises them
 * for a fresh index) and the fill (for an upgraded one) are complete, and nothing is queued (a
 * queued change may have raised a timestamp they do not know yet). They then serve any index's
 * matches, not only the short-CJK index's.
 */
export function cjkOrderUsable(db: SqlExecutor): boolean {
  return cjkBlocksComplete(db) && !cjkQueuePending(db);
}

/**
 * Whether the timestamp blocks bound every message that is not queued: the backfill and the
 * fill are complete (a change to a message queues it; applying the queue raises its bounds).
 */
export function cjkBlocksComplete(db: SqlExecutor): boolean {
  const fill = timestampBlocksFill(db, CJK_STATE_TABLE);
  return fill !== null && fill.next >= fill.end && backfillComplete(db);
}

function backfillComplete(db: SqlExecutor): boolean {
  const backfill = cjkBackfillState(db);
  return backfill !== null && backfill.next >= backfill.end;
}

/** Drops every object of the index (the triggers first, so no write ever meets a missing table). */
export function dropCjkIndex(db: SqlExecutor): void {
  for (const name of Object.keys(CJK_INDEX_TRIGGERS)) db.exec(`DROP TRIGGER IF EXISTS ${name}`);
  for (const name of Object.keys(CJK_INDEX_DDL)) db.exec(`DROP TABLE IF EXISTS ${name}`);
}

interface MessageTexts {
  id: number;
  timestamp: number;
  content: string | null;
  tool_calls: string | null;
  tool_name: string | null;
}

/** (Re)indexes one message: old postings go, current ones come in (idempotent). */
function reindex(db: SqlExecutor, id: number, row: MessageTexts | undefined): void {
  db.run(`DELETE FROM ${CJK_INDEX_TABLE} WHERE rowid = ?`, [id]);
  if (row === undefined) return;
  const doc = cjkGramDocument([row.content, row.tool_calls, row.tool_name]);
  if (doc !== null) db.run(`INSERT INTO ${CJK_INDEX_TABLE}(rowid, grams) VALUES (?, ?)`, [id, doc]);
}

/** Backfill progress of the index. */
export interface CjkBackfillState {
  /** Messages with an id up to `next` are indexed. */
  readonly next: number;
  /** Last message id to backfill (ids above it come through the queue). */
  readonly end: number;
}

/** Backfill progress, or `null` when the state table is missing or empty. */
export function cjkBackfillState(db: SqlExecutor): CjkBackfillState | null {
  if (!objectExists(db, "table", CJK_STATE_TABLE)) return null;
  const rows = db.all<{ key: string; value: number }>(`SELECT key, value FROM ${CJK_STATE_TABLE}`);
  const next = rows.find((r) => r.key === "backfill_next")?.value;
  const end = rows.find((r) => r.key === "backfill_end")?.value;
  return next === undefined || end === undefined ? null : { next, end };
}

/**
 * Indexes the next `chunk` messages of the backfill range; run inside a write transaction.
 * Returns how far the range advanced and how much of it is left, in message ids (counting rows
 * would read the rest of the table on every chunk).
 */
export function backfillCjkChunk(db: SqlExecutor, chunk: number): { done: number; remaining: number } {
  const state = cjkBackfillState(db);
  if (state === null || state.next >= state.end) return { done: 0, remaining: 0 };
  const rows = db.all<MessageTexts>(
    "SELECT id, timestamp, content, tool_calls, tool_name FROM messages WHERE id > ? AND id <= ? ORDER BY id LIMIT ?",
    [state.next, state.end, chunk],
  );
  for (const row of rows) {
    // Messages of the backfill range have never been indexed (the queue is applied only once
    // the backfill is complete, and a rebuild starts from an empty index): insert only.
    const doc = cjkGramDocument([row.content, row.tool_calls, row.tool_name]);
    if (doc !== null) db.run(`INSERT INTO ${CJK_INDEX_TABLE}(rowid, grams) VALUES (?, ?)`, [row.id, doc]);
  }
  const last = rows.length < chunk ? state.end : (rows[rows.length - 1]?.id ?? state.end);
  if (objectExists(db, "table", CJK_ORDER_TABLE)) raiseTimestampBlocks(db, state.next, last);
  db.run(`UPDATE ${CJK_STATE_TABLE} SET value = ? WHERE key = 'backfill_next'`, [last]);
  return { done: last - state.next, remaining: state.end - last };
}

/** Number of queued changes not yet applied to the index (0 when the queue is missing). */
export function cjkQueueDepth(db: SqlExecutor): number {
  if (!objectExists(db, "table", CJK_QUEUE_TABLE)) return 0;
  return db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${CJK_QUEUE_TABLE}`)?.n ?? 0;
}

/**
 * The ids of the messages queued for the index, when a read can answer from the index and
 * those rows (`withQueuedCjkRows`): the index exists, is of this version and its backfill is
 * complete, so every message not queued is current in it. `null` when it cannot, or when more
 * than `max` changes are queued (a scan is then as cheap). Read it in the search's own read
 * transaction, so the queue and the index are of one snapshot.
 */
export function cjkQueuedIds(db: SqlExecutor, max: number): number[] | null {
  if (cjkIndexPresence(db) !== "present" || cjkIndexNeedsUpgrade(db) || !backfillComplete(db)) return null;
  const queued = db.all<{ id: number }>(
    `SELECT message_id AS id FROM ${CJK_QUEUE_TABLE} ORDER BY rowid LIMIT ?`,
    [max + 1],
  );
  if (queued.length > max) return null;
  return [...new Set(queued.map((q) => q.id))];
}

/** Whether any change waits in the queue (cheap: one index probe). */
export function cjkQueuePending(db: SqlExecutor): boolean {
  return db.get(`SELECT 1 AS x FROM ${CJK_QUEUE_TABLE} LIMIT 1`) !== undefined;
}

/**
 * Applies up to `chunk` queued changes (written by anyone: this process, another of ours,
 * the reference) to the index and removes them from the queue; run inside a write
 * transaction. Returns how many queue entries were applied.
 */
export function drainCjkQueue(db: SqlExecutor, chunk: number): number {
  const queued = db.all<{ seq: number; message_id: number }>(
    `SELECT rowid AS seq, message_id FROM ${CJK_QUEUE_TABLE} ORDER BY rowid LIMIT ?`,
    [chunk],
  );
  if (queued.length === 0) return 0;
  const lastSeq = queued[queued.length - 1]?.seq ?? 0;
  const ids = [...new Set(queued.map((q) => q.message_id))];
  // Absent only in an index not yet upgraded (see createCjkIndex), whose fill covers it later.
  const blocks = objectExists(db, "table", CJK_ORDER_TABLE);
  for (const id of ids) {
    const row = db.get<MessageTexts>(
      "SELECT id, timestamp, content, tool_calls, tool_name FROM messages WHERE id = ?",
      [id],
    );
    reindex(db, id, row);
  }
  // Messages written or re-stamped since: their blocks' bounds may have to rise.
  if (blocks) raiseTimestampBlocksOf(db, ids);
  db.run(`DELETE FROM ${CJK_QUEUE_TABLE} WHERE rowid <= ?`, [lastSeq]);
  return queued.length;
}
