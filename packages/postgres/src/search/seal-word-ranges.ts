import { sql } from "kysely";
import type { PgDb } from "../pg-database.js";
import {
  REGISTERED_INDEX_NAMES_SQL,
  rangeIndexName,
  rangeIndexSql,
  rangeTrigramIndexName,
  rangeTrigramIndexSql,
  readWordRanges,
  SEAL_LOCK_KEY,
  WORD_INDEX_PATTERN,
  type WordRange,
} from "./word-ranges.js";

/** Where a seal is; {@link SealOptions.onStep} is called (and awaited) after each. */
export type SealStep =
  /** The lock is held and the bound chosen (recorded for imports); nothing built yet. */
  | "chosen"
  /** The new sealed range's RUM and trigram indexes are built (not yet used by queries). */
  | "sealed-built"
  /** The new open range's GIN index is built (not yet used). */
  | "open-built"
  /** The registry names the new ranges: queries that read it now use them. */
  | "switched"
  /** The indexes of the ranges replaced are dropped. */
  | "dropped";

/** Options of a seal. */
export interface SealOptions {
  /** Seal only when the open range holds at least this many ids (ignored with `force`). */
  readonly sealEvery: number;
  /** Seal whatever the open range holds (at least one id). */
  readonly force?: boolean;
  /** Pause between the switch and dropping the replaced indexes, in ms (see `WordIndexOptions`). */
  readonly dropDelayMs: number;
  /** Aborted when the store closes: the seal stops at its next step (or its sleep). */
  readonly signal?: AbortSignal;
  readonly onStep?: (step: SealStep, range: { lo: number; hi: number }) => void | Promise<void>;
}

/** What a seal did. */
export interface SealReport {
  /**
   * `sealed`; `busy` (another store holds the lock); `not-needed` (the open range is below the
   * mark); `gin` (the GIN layout: nothing to seal).
   */
  readonly outcome: "sealed" | "busy" | "not-needed" | "gin";
  /** The new sealed range (a merge of the newest sealed ranges with the open one's rows). */
  readonly range?: { readonly lo: number; readonly hi: number };
  /** Sealed ranges merged into it. */
  readonly merged: number;
}

/** Waits `ms`, or less when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** Thrown at a seal's next step once its store closes. */
export class SealStopped extends Error {
  constructor() {
    super("the seal stopped: its store is closing");
  }
}

/**
 * The sealed ranges a seal of the open range up to `top` folds in, newest first, and the new
 * range's lower bound: while the newest sealed range spans no more ids than the new range so
 * far, it is merged in (a binary counter: ranges double in size, so a ranked query reads
 * O(log n) RUM indexes and each row is rebuilt O(log n) times).
 */
export function sealPlan(ranges: readonly WordRange[], top: number): { lo: number; folded: WordRange[] } {
  const sealed = ranges.filter((r) => r.hi !== null);
  const open = ranges.find((r) => r.hi === null)!;
  let lo = open.lo;
  let span = top - open.lo;
  const folded: WordRange[] = [];
  for (let i = sealed.length - 1; i >= 0; i--) {
    const r = sealed[i]!;
    const size = r.hi! - r.lo;
    if (size > span) break;
    folded.push(r);
    span += size;
    lo = r.lo;
  }
  return { lo, folded };
}

/** Drops range indexes the registry does not stand for (a seal that died half-way), concurrently. */
async function dropStrayIndexes(db: PgDb): Promise<void> {
  const { rows } = await sql<{ name: string }>`SELECT c.relname AS name FROM pg_index i
      JOIN pg_class c ON c.oid = i.indexrelid
    WHERE i.indrelid = 'messages'::regclass AND c.relname LIKE ${WORD_INDEX_PATTERN}
      AND c.relname NOT IN (${sql.raw(REGISTERED_INDEX_NAMES_SQL)})`.execute(db);
  for (const { name } of rows) await sql`DROP INDEX CONCURRENTLY IF EXISTS ${sql.ref(name)}`.execute(db);
}

/**
 * Builds the index `name` (its `CREATE INDEX CONCURRENTLY` statement `create`) while appends
 * and searches go on; a build that fails leaves an invalid index, dropped before the error is
 * passed on.
 */
async function buildConcurrently(
  db: PgDb,
  name: string,
  create: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (signal?.aborted) throw new SealStopped();
  try {
    await sql.raw(create).execute(db);
  } catch (error) {
    // Cancelled by close(): the next seal drops it (the pool is about to end).
    if (signal?.aborted) throw error;
    await sql`DROP INDEX CONCURRENTLY IF EXISTS ${sql.ref(name)}`.execute(db).catch(() => {});
    throw error;
  }
}

/**
 * Seals the open range on `db`, ONE connection outside any transaction (`CREATE INDEX
 * CONCURRENTLY` cannot run in one), under the schema's seal lock (a session advisory lock:
 * another store's seal makes this one return `busy`):
 *
 * 1. choose the bound `top`, the last id the sequence handed out: every later append gets a
 *    larger id, so the new RUM index takes no insert once its concurrent build has waited out
 *    the transactions that drew ids up to `top`; `top` is recorded for imports;
 * 2. build the RUM and trigram indexes of `(lo, top]` (merging the newest sealed ranges, see
 *    {@link sealPlan});
 * 3. build the GIN index of the new open range `id > top`;
 * 4. switch the registry in one transaction;
 * 5. after `dropDelayMs` (stores re-read the registry meanwhile), drop the replaced indexes.
 *
 * Until 4 queries use the old ranges, whose indexes exist throughout; a row appended at any
 * step lands in the old open index and the new one, and each query's ranges partition the ids,
 * so it is found exactly once.
 */
export async function sealWordRanges(db: PgDb, o: SealOptions): Promise<SealReport> {
  const { rows } = await sql<{
    ok: boolean;
  }>`SELECT pg_try_advisory_lock(${sql.raw(SEAL_LOCK_KEY)}) AS ok`.execute(db);
  if (rows[0]?.ok !== true) return { outcome: "busy", merged: 0 };
  try {
    await dropStrayIndexes(db);
    const ranges = await readWordRanges(db);
    const open = ranges.find((r) => r.hi === null);
    if (open === undefined) return { outcome: "gin", merged: 0 };
    const top = Number(
      (
        await sql<{ top: number | null }>`SELECT greatest(
            pg_sequence_last_value(pg_get_serial_sequence('messages', 'id')::regclass),
            (SELECT max(id) FROM messages)) AS top`.execute(db)
      ).rows[0]?.top ?? 0,
    );
    if (top <= open.lo || (o.force !== true && top - open.lo < o.sealEvery))
      return { outcome: "not-needed", merged: 0 };
    await sql`UPDATE search_word_ranges SET sealing_to = ${top} WHERE hi IS NULL`.execute(db);
    const { lo, folded } = sealPlan(ranges, top);
    const sealed = { lo, hi: top };
    const next = { lo: top, hi: null };
    const step = async (s: SealStep) => o.onStep?.(s, sealed);
    await step("chosen");
    await buildConcurrently(db, rangeIndexName(sealed), rangeIndexSql(sealed, true), o.signal);
    await buildConcurrently(db, rangeTrigramIndexName(sealed), rangeTrigramIndexSql(sealed, true), o.signal);
    await step("sealed-built");
    await buildConcurrently(db, rangeIndexName(next), rangeIndexSql(next, true), o.signal);
    await step("open-built");
    if (o.signal?.aborted) throw new SealStopped();
    await db.transaction().execute(async (trx) => {
      await sql`DELETE FROM search_word_ranges WHERE lo >= ${lo}`.execute(trx);
      await sql`INSERT INTO search_word_ranges (lo, hi, index_name)
        VALUES (${lo}, ${top}, ${rangeIndexName(sealed)}), (${top}, NULL, ${rangeIndexName(next)})`.execute(
        trx,
      );
    });
    await step("switched");
    if (o.dropDelayMs > 0) await sleep(o.dropDelayMs, o.signal);
    // Stopped: the replaced indexes, no longer in the registry, go with the next seal.
    if (o.signal?.aborted) return { outcome: "sealed", range: sealed, merged: folded.length };
    const replaced = [...folded.flatMap((r) => [r.index, rangeTrigramIndexName(r)]), open.index];
    for (const name of replaced) await sql`DROP INDEX CONCURRENTLY IF EXISTS ${sql.ref(name)}`.execute(db);
    await step("dropped");
    return { outcome: "sealed", range: sealed, merged: folded.length };
  } finally {
    // A broken connection has released the lock with the session.
    await sql`SELECT pg_advisory_unlock(${sql.raw(SEAL_LOCK_KEY)})`.execute(db).catch(() => {});
  }
}
