import { type RawBuilder, sql } from "kysely";
import type { PgDb } from "../pg-database.js";
import { searchDocumentSql } from "./search-document.js";

/**
 * The word index split by message id (schema v6, on servers with RUM). Sealed ranges
 * `(lo, hi]` each have a RUM index built in bulk that takes no insert afterwards (RUM 1.3.13
 * failed under inserts concurrent with ranked scans: postgrespro/rum#144); the open range
 * `id > lo` (the newest messages, where appends land) has a GIN index. PostgreSQL maintains
 * each partial index by its predicate, so every row is in exactly one range's index, and a
 * query over any partition of the ids (a stale one included) finds every row once.
 */
export interface WordRange {
  /** Ids above `lo`. */
  readonly lo: number;
  /** Ids up to `hi` (inclusive); `null` for the open range. */
  readonly hi: number | null;
  /** The range's index (RUM when sealed, GIN when open). */
  readonly index: string;
}

/** The ranges' registry: one row per range, exactly one of them open (`hi` NULL). */
export const WORD_RANGES_TABLE_SQL = [
  `CREATE TABLE IF NOT EXISTS search_word_ranges (
    lo bigint PRIMARY KEY,
    hi bigint CHECK (hi > lo),
    index_name text NOT NULL UNIQUE,
    -- A seal under way moves the open range's rows up to here into a sealed range: imports
    -- give explicit ids only above it (see sealedFloor).
    sealing_to bigint)`,
  "CREATE UNIQUE INDEX IF NOT EXISTS search_word_ranges_one_open ON search_word_ranges ((true)) WHERE hi IS NULL",
];

/**
 * Names of the word index's indexes (`idx_messages_words_<lo>_<hi>`, `idx_messages_words_open_<lo>`)
 * as a `LIKE` pattern; the GIN fallback keeps `idx_messages_search_vector`.
 */
export const WORD_INDEX_PATTERN = "idx\\_messages\\_words\\_%";

/**
 * The key of the lock that seals, merges and lays out the ranges of one schema: a session lock
 * while a seal runs (several statements outside a transaction), a transaction lock for a layout.
 */
export const SEAL_LOCK_KEY = "hashtext('hermes-word-seal:' || current_schema())";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Takes the seal lock for this transaction (`transaction`) or until {@link unlockSeals}
 * (`session`), waiting for a seal under way. By polling: a statement blocked on the lock holds
 * a snapshot, which the seal's concurrent index build waits out (a deadlock the server would
 * break by failing one of them).
 */
export async function lockSeals(db: PgDb, scope: "transaction" | "session"): Promise<void> {
  const fn = sql.raw(scope === "transaction" ? "pg_try_advisory_xact_lock" : "pg_try_advisory_lock");
  for (let pause = 5; ; pause = Math.min(pause * 2, 250)) {
    const { rows } = await sql<{ ok: boolean }>`SELECT ${fn}(${sql.raw(SEAL_LOCK_KEY)}) AS ok`.execute(db);
    if (rows[0]?.ok === true) return;
    await sleep(pause);
  }
}

/** Releases the session seal lock of {@link lockSeals}. */
export async function unlockSeals(db: PgDb): Promise<void> {
  await sql`SELECT pg_advisory_unlock(${sql.raw(SEAL_LOCK_KEY)})`.execute(db);
}

/**
 * `(id + 0)`, not `id`: the range predicates of the partial indexes and of the queries are on
 * this expression so that the primary key cannot serve them. Given `id > lo`, the planner
 * walked the open range by the primary key and checked every row's vector (it prices `@@` as
 * cheap as a comparison) instead of reading the GIN index; on `id + 0` a range's part can only
 * use its own index (or a scan, which it never picks over an index of the range).
 */
const ID = "(id + 0::bigint)";

const literal = (n: number) => {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a message id bound: ${n}`);
  return `${n}::bigint`;
};

/** The range's predicate as SQL text on `messages` (unqualified columns; `alias` to qualify). */
export function rangePredicate(range: Pick<WordRange, "lo" | "hi">, alias = ""): string {
  const id = alias === "" ? ID : ID.replace("id", `${alias}.id`);
  const upper = range.hi === null ? "" : ` AND ${id} <= ${literal(range.hi)}`;
  return `${id} > ${literal(range.lo)}${upper}`;
}

/** {@link rangePredicate} on `m` as a query condition. */
export function rangeCondition(range: Pick<WordRange, "lo" | "hi">): RawBuilder<boolean> {
  return sql<boolean>`${sql.raw(rangePredicate(range, "m"))}`;
}

/** The index name of a range. */
export function rangeIndexName(range: Pick<WordRange, "lo" | "hi">): string {
  return range.hi === null
    ? `idx_messages_words_open_${range.lo}`
    : `idx_messages_words_${range.lo}_${range.hi}`;
}

/**
 * The name of a sealed range's pg_trgm index (schema v9). Only sealed ranges have one: an append
 * then inserts no trigrams (it was over half of an append's WAL), and a substring query reads
 * the open range's rows off the primary key (see `substringRangesCondition`).
 */
export function rangeTrigramIndexName(range: Pick<WordRange, "lo" | "hi">): string {
  if (range.hi === null) throw new RangeError("the open range has no trigram index");
  return `${rangeIndexName(range)}_trgm`;
}

/** `CREATE INDEX` of a sealed range's pg_trgm index (see {@link rangeTrigramIndexName}). */
export function rangeTrigramIndexSql(range: Pick<WordRange, "lo" | "hi">, concurrently: boolean): string {
  return `CREATE INDEX ${concurrently ? "CONCURRENTLY " : ""}IF NOT EXISTS ${rangeTrigramIndexName(range)}
    ON messages USING gin (${searchDocumentSql()} public.gin_trgm_ops) WHERE ${rangePredicate(range)}`;
}

/**
 * PL/pgSQL: `EXECUTE` of {@link rangeTrigramIndexSql} (not concurrently) for the sealed range
 * `(lo, hi]` given as PL/pgSQL expressions (the layout's and the v9 upgrade's, which read the
 * bounds on the server).
 */
export function trigramIndexPlpgsql(lo: string, hi: string): string {
  const document = searchDocumentSql().replaceAll("'", "''");
  return `EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON messages USING gin (${document} public.gin_trgm_ops)
      WHERE ${ID} > %s::bigint AND ${ID} <= %s::bigint', 'idx_messages_words_' || ${lo} || '_' || ${hi} || '_trgm', ${lo}, ${hi});`;
}

/**
 * The indexes the registry stands for, a query of `(lo, hi, name, trigrams)`: each range's
 * word index, and each sealed range's trigram index (`trigrams`). The indexes matching
 * {@link WORD_INDEX_PATTERN} outside it are strays of a seal that died half-way.
 */
export const REGISTERED_INDEXES_SQL = `SELECT lo, hi, index_name AS name, false AS trigrams FROM search_word_ranges
  UNION ALL SELECT lo, hi, index_name || '_trgm', true FROM search_word_ranges WHERE hi IS NOT NULL`;

/** The names of {@link REGISTERED_INDEXES_SQL}, as a subquery. */
export const REGISTERED_INDEX_NAMES_SQL = `SELECT name FROM (${REGISTERED_INDEXES_SQL}) AS registered`;

/** `CREATE INDEX` of a range: RUM with positions when sealed, GIN when open. */
export function rangeIndexSql(range: Pick<WordRange, "lo" | "hi">, concurrently: boolean): string {
  const method = range.hi === null ? "gin (search_vector)" : "rum (search_vector public.rum_tsvector_ops)";
  return `CREATE INDEX ${concurrently ? "CONCURRENTLY " : ""}IF NOT EXISTS ${rangeIndexName(range)}
    ON messages USING ${method} WHERE ${rangePredicate(range)}`;
}

/** The registered ranges, oldest first (the open one last); empty on the GIN layout. */
export async function readWordRanges(db: PgDb): Promise<WordRange[]> {
  const { rows } = await sql<{ lo: number; hi: number | null; index_name: string }>`
    SELECT lo, hi, index_name FROM search_word_ranges ORDER BY lo`.execute(db);
  return rows.map((r) => ({
    lo: Number(r.lo),
    hi: r.hi === null ? null : Number(r.hi),
    index: r.index_name,
  }));
}

/**
 * Ids at or below this are in a sealed range (or about to be: the bound a seal under way moves
 * the open range to); 0 on the GIN layout. A write there (an import keeping an explicit id, a
 * rebuild rewriting a row) inserts into a RUM index, which it does holding `messages`
 * exclusively, so that no scan of that index runs beside it.
 */
export async function sealedFloor(db: PgDb): Promise<number> {
  const { rows } = await sql<{ floor: number | null }>`
    SELECT max(greatest(lo, coalesce(sealing_to, 0))) AS floor FROM search_word_ranges WHERE hi IS NULL`.execute(
    db,
  );
  return Number(rows[0]?.floor ?? 0);
}

/**
 * Lays the word index out anew from the table (upgrade to v6, after a bulk load, when RUM
 * arrives): one sealed range of every id drawn so far and an empty open range, built in this
 * transaction with appends held off (`SHARE` lock; reads go on), with the sealed range's
 * trigram index (v9: it replaces the whole table's), then the indexes the registry no longer
 * names are dropped. An index that already exists valid under a range's name is kept.
 */
export const WORD_INDEX_LAYOUT_SQL = `DO $layout$
DECLARE
  top bigint;
  stale record;
BEGIN
  PERFORM pg_advisory_xact_lock(${SEAL_LOCK_KEY});
  LOCK TABLE messages IN SHARE MODE;
  top := greatest(coalesce((SELECT max(id) FROM messages), 0),
    coalesce(pg_sequence_last_value(pg_get_serial_sequence('messages', 'id')::regclass), 0));
  DELETE FROM search_word_ranges;
  IF top > 0 THEN
    INSERT INTO search_word_ranges (lo, hi, index_name) VALUES (0, top, 'idx_messages_words_0_' || top);
  END IF;
  INSERT INTO search_word_ranges (lo, hi, index_name) VALUES (top, NULL, 'idx_messages_words_open_' || top);
  -- An invalid index (a concurrent build that failed) under one of these names is rebuilt.
  FOR stale IN SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = 'messages'::regclass AND NOT i.indisvalid
        AND c.relname IN (${REGISTERED_INDEX_NAMES_SQL}) LOOP
    EXECUTE format('DROP INDEX %I', stale.relname);
  END LOOP;
  IF top > 0 THEN
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON messages USING rum (search_vector public.rum_tsvector_ops)
      WHERE ${ID} > 0::bigint AND ${ID} <= %s::bigint', 'idx_messages_words_0_' || top, top);
  END IF;
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON messages USING gin (search_vector) WHERE ${ID} > %s::bigint',
    'idx_messages_words_open_' || top, top);
  -- v9: trigrams by sealed range; the whole table's pg_trgm index goes.
  IF top > 0 THEN
    ${trigramIndexPlpgsql("0", "top")}
  END IF;
  DROP INDEX IF EXISTS idx_messages_search_trgm;
  FOR stale IN SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = 'messages'::regclass
        AND (c.relname LIKE '${WORD_INDEX_PATTERN}' OR c.relname = 'idx_messages_search_vector')
        AND c.relname NOT IN (${REGISTERED_INDEX_NAMES_SQL}) LOOP
    EXECUTE format('DROP INDEX %I', stale.relname);
  END LOOP;
END $layout$`;
