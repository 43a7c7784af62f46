import { InvalidArgumentError, optionsObject as options, StoreClosedError } from "@hermes/core";
import type { SearchIndexProgress, SearchIndexReport, SearchIndexStatus } from "@hermes/search";
import { sql } from "kysely";
import type { PgDb } from "../pg-database.js";
import { mapPgError } from "../pg-errors.js";
import { ensureRum } from "../pg-extensions.js";
import { searchIndexStatements } from "../pg-schema.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { searchColumns } from "../search/pg-search-text.js";
import { sealUnderWay, sealUnderWayText } from "../search/seal-under-way.js";
import { type SealReport, type SealStep, SealStopped } from "../search/seal-word-ranges.js";
import type { WordIndex } from "../search/word-index.js";
import {
  lockSeals,
  REGISTERED_INDEXES_SQL,
  rangeIndexSql,
  rangeTrigramIndexName,
  rangeTrigramIndexSql,
  readWordRanges,
  sealedFloor,
  unlockSeals,
  WORD_INDEX_LAYOUT_SQL,
  WORD_INDEX_PATTERN,
  type WordRange,
} from "../search/word-ranges.js";
import { messageCount } from "./sessions.js";

/** The name `verifySearchIndex` gives the split word index (its ranges' indexes share it as a prefix). */
const SPLIT_WORD_INDEX = "idx_messages_words";

/** One index the word ranges' registry stands for, and whether it exists valid. */
interface RegisteredIndex {
  readonly lo: number;
  readonly hi: number | null;
  readonly name: string;
  /** A sealed range's trigram index (v9), not its word index. */
  readonly trigrams: boolean;
  readonly valid: boolean | null;
}

/** Every index of the registry's ranges (see `REGISTERED_INDEXES_SQL`), oldest range first. */
async function registeredIndexes(db: PgDb): Promise<RegisteredIndex[]> {
  const { rows } = await sql<RegisteredIndex>`
    SELECT r.lo, r.hi, r.name, r.trigrams, i.indisvalid AS valid FROM (${sql.raw(REGISTERED_INDEXES_SQL)}) r
      LEFT JOIN pg_class c ON c.relname = r.name
        AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
      LEFT JOIN pg_index i ON i.indexrelid = c.oid
    ORDER BY r.lo`.execute(db);
  return rows;
}

/** The indexes of `rows` that are not there valid, as a `doctor` detail (empty: none). */
function brokenIndexes(rows: readonly RegisteredIndex[]): string {
  return rows
    .filter((r) => r.valid !== true)
    .map((r) => `${r.name} (${r.valid === false ? "invalid" : "does not exist"})`)
    .join(", ");
}

/** The split word index's state: every range's index present and valid, the open range's size. */
async function splitWordStatus(
  db: PgDb,
  index: WordIndex,
  missingVectors: number,
  registered: readonly RegisteredIndex[],
): Promise<SearchIndexStatus> {
  const name = SPLIT_WORD_INDEX;
  const kind = "unicode61" as const;
  const rows = registered.filter((r) => !r.trigrams);
  const broken = brokenIndexes(rows);
  if (broken !== "")
    return { name, kind, status: "missing", detail: `word index ranges without their index: ${broken}` };
  if (missingVectors > 0)
    return { name, kind, status: "damaged", detail: `${missingVectors} messages have no search vector` };
  const open = rows[rows.length - 1]!;
  const top = Number(
    (await sql<{ top: number | null }>`SELECT max(id) AS top FROM messages`.execute(db)).rows[0]?.top ?? 0,
  );
  const { sealEvery } = index.options;
  const held = Math.max(0, top - Number(open.lo));
  const failed =
    index.lastSealError === null ? "" : `; the last seal failed: ${(index.lastSealError as Error).message}`;
  // Diagnostic only: a server that will not show its locks leaves the phrase out.
  const underWay = await sealUnderWay(db).catch(() => null);
  const sealing = underWay === null ? "" : `; ${sealUnderWayText(underWay)}`;
  const detail =
    `${rows.length - 1} sealed range(s) on RUM up to id ${open.lo}, the open range on GIN above it ` +
    `(${held} ids; sealed every ${sealEvery})${failed}${sealing}`;
  // Past twice the mark, ranked queries read more of the open range than the design bounds.
  if (held > 2 * sealEvery) {
    const next = underWay === null ? ": a seal runs after the next append" : "";
    return { name, kind, status: "behind", detail: `${detail}${next}` };
  }
  return { name, kind, status: "ok", detail };
}

/** The name `verifySearchIndex` gives the sealed ranges' trigram indexes (v9). */
const SPLIT_TRIGRAM_INDEX = "idx_messages_words_trgm";

/** The sealed ranges' trigram indexes: each present and valid (the open range has none). */
function splitTrigramStatus(registered: readonly RegisteredIndex[]): SearchIndexStatus {
  const rows = registered.filter((r) => r.trigrams);
  const base = { name: SPLIT_TRIGRAM_INDEX, kind: "trigram" as const };
  const broken = brokenIndexes(rows);
  if (broken !== "")
    return { ...base, status: "missing", detail: `sealed ranges without their trigram index: ${broken}` };
  return {
    ...base,
    status: "ok",
    detail: `pg_trgm by sealed range (${rows.length}); the open range's rows are read off the primary key`,
  };
}

/** State of the search index: rows whose `search_vector` is missing count as damage. */
export async function verifySearchIndex(ctx: PgStoreContext): Promise<SearchIndexReport> {
  return ctx.read(async (db) => {
    const missing =
      (
        await db
          .selectFrom("messages")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("search_vector", "is", null)
          .executeTakeFirst()
      )?.n ?? 0;
    const indexes = (
      await sql<{ indexname: string }>`SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()
        AND indexname IN ('idx_messages_search_vector', 'idx_messages_search_trgm', 'idx_messages_search_grams',
          'idx_messages_cjk_recent')`.execute(db)
    ).rows.map((r) => r.indexname);
    const status = (name: string, kind: "unicode61" | "trigram" | "short-cjk"): SearchIndexStatus => {
      if (!indexes.includes(name))
        return { name, kind, status: "missing" as const, detail: `index ${name} does not exist` };
      if (kind === "unicode61" && missing > 0)
        return {
          name,
          kind,
          status: "damaged" as const,
          detail: `${missing} messages have no search vector`,
        };
      return { name, kind, status: "ok" as const };
    };
    const registered = await registeredIndexes(db);
    const split = registered.length > 0;
    const list = [
      split
        ? await splitWordStatus(db, ctx.searchIndex, missing, registered)
        : status("idx_messages_search_vector", "unicode61"),
      split ? splitTrigramStatus(registered) : status("idx_messages_search_trgm", "trigram"),
      status("idx_messages_search_grams", "short-cjk"),
      status("idx_messages_cjk_recent", "short-cjk"),
    ];
    return { ok: list.every((s) => s.status !== "missing" && s.status !== "damaged"), indexes: list };
  });
}

/**
 * The word index's indexes, in a write transaction: with RUM, the split layout (laid out from
 * the table when there is none yet, e.g. coming from GIN; else each registered range's index,
 * and each sealed range's trigram index, made where missing or invalid, built in this
 * transaction); without RUM, nothing (the GIN index is one of `searchIndexStatements`).
 */
async function ensureWordIndexes(db: PgDb, rum: boolean): Promise<void> {
  if (!rum) return;
  // No seal in between (a seal holds the lock for its whole run).
  await lockSeals(db, "transaction");
  const ranges = await readWordRanges(db);
  if (ranges.length === 0) {
    await sql.raw(WORD_INDEX_LAYOUT_SQL).execute(db);
    return;
  }
  const invalid = new Set(
    (
      await sql<{
        name: string;
      }>`SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = 'messages'::regclass AND NOT i.indisvalid`.execute(db)
    ).rows.map((r) => r.name),
  );
  for (const range of ranges) {
    if (invalid.has(range.index)) await sql`DROP INDEX ${sql.ref(range.index)}`.execute(db);
    await sql.raw(rangeIndexSql(range, false)).execute(db);
    if (range.hi === null) continue;
    const trigrams = rangeTrigramIndexName(range);
    if (invalid.has(trigrams)) await sql`DROP INDEX ${sql.ref(trigrams)}`.execute(db);
    await sql.raw(rangeTrigramIndexSql(range, false)).execute(db);
  }
}

/**
 * Recomputes every message's search columns (rows whose stored columns differ are rewritten, in
 * transactions of 1,000 messages; holding `messages` exclusively when one is in a sealed
 * range), then recreates missing search indexes; with RUM installed
 * since the schema was made, the word index is laid out split. A sealed range whose rows were
 * rewritten then gets a fresh RUM index (`REINDEX CONCURRENTLY`).
 */
export async function rebuildSearchIndex(
  ctx: PgStoreContext,
  o?: { onProgress?: (progress: SearchIndexProgress) => void },
): Promise<void> {
  const opts = options("options", o);
  if (opts.onProgress !== undefined && typeof opts.onProgress !== "function") {
    throw new InvalidArgumentError("onProgress", "onProgress must be a function");
  }
  const total = await messageCount(ctx);
  const ranges = await ctx.read((db) => readWordRanges(db));
  const rewritten = new Set<WordRange>();
  let after = 0;
  let done = 0;
  for (;;) {
    const from = after;
    const n = await ctx.write(async (db) => {
      const rows = await db
        .selectFrom("messages")
        .select(["id", "content", "tool_calls", "tool_name"])
        .where("id", ">", from)
        .orderBy("id")
        .limit(1000)
        .execute();
      if (rows.length === 0) return 0;
      // (Set in the attempt that commits: a retried attempt reads the same rows again.)
      after = rows[rows.length - 1]!.id;
      const columns = rows.map((r) => searchColumns(r.content, r.tool_calls, r.tool_name));
      const computed = sql`unnest(${rows.map((r) => r.id)}::bigint[], ${columns.map((c) => c.vector)}::text[],
          ${columns.map((c) => c.grams)}::text[]) AS u(id, v, g)`;
      const differs = sql`(m.search_vector IS DISTINCT FROM u.v::tsvector OR m.search_grams IS DISTINCT FROM u.g::tsvector)`;
      // Rows already right are left alone: a rewrite is an insert into every index of the row.
      const changed = await sql<{ id: number }>`SELECT m.id FROM messages m JOIN ${computed} ON m.id = u.id
        WHERE ${differs}`.execute(db);
      if (changed.rows.length === 0) return rows.length;
      // A rewrite in a sealed range inserts into its RUM index: never beside a scan of it.
      const floor = await sealedFloor(db);
      if (changed.rows.some((r) => r.id <= floor))
        await sql`LOCK TABLE messages IN ACCESS EXCLUSIVE MODE`.execute(db);
      await sql`UPDATE messages AS m SET search_vector = u.v::tsvector, search_grams = u.g::tsvector
        FROM ${computed} WHERE m.id = u.id AND ${differs}`.execute(db);
      for (const { id } of changed.rows) {
        const range = ranges.find((r) => r.hi !== null && id > r.lo && id <= r.hi);
        if (range !== undefined) rewritten.add(range);
      }
      return rows.length;
    });
    done += n;
    opts.onProgress?.({ index: "idx_messages_search_vector", done, total });
    if (n < 1000) break;
  }
  await ctx.write(async (db) => {
    // First: waiting for a seal holds nothing it waits for.
    await lockSeals(db, "transaction");
    const rum = await ensureRum(db);
    await ensureWordIndexes(db, rum);
    for (const statement of searchIndexStatements({ rum })) await sql.raw(statement).execute(db);
  });
  await ctx.searchIndex.refresh();
  if (rewritten.size > 0) await reindexSealed(ctx, [...rewritten]);
}

/** Rebuilds sealed ranges' RUM indexes concurrently, under the seal lock (one connection). */
async function reindexSealed(ctx: PgStoreContext, ranges: readonly WordRange[]): Promise<void> {
  await ctx.write(
    async (db) => {
      await lockSeals(db, "session");
      try {
        const current = new Set((await readWordRanges(db)).map((r) => r.index));
        // A range merged meanwhile was rebuilt by its seal.
        for (const r of ranges)
          if (current.has(r.index)) await sql`REINDEX INDEX CONCURRENTLY ${sql.ref(r.index)}`.execute(db);
      } finally {
        await unlockSeals(db);
      }
    },
    { transaction: false },
  );
}

/** The search indexes of `messages` (dropped for a bulk load, see {@link deferSearchIndexes}). */
const SEARCH_INDEXES = [
  "idx_messages_search_vector",
  "idx_messages_search_grams",
  "idx_messages_search_trgm",
  "idx_messages_cjk_recent",
];

/**
 * For a bulk load into an empty store (`migrate-to-postgres`): drops the search indexes (and
 * empties the word index's registry: the GIN layout until the indexes are built), so rows go
 * in without per-row index maintenance, and returns `true`; a store holding messages is left
 * alone (`false`). {@link buildSearchIndexes} brings them back (as does `rebuildSearchIndex`,
 * and `verifySearchIndex` reports them missing meanwhile).
 */
export async function deferSearchIndexes(ctx: PgStoreContext): Promise<boolean> {
  const deferred = await ctx.write(async (db) => {
    await lockSeals(db, "transaction");
    await sql`LOCK TABLE messages IN SHARE ROW EXCLUSIVE MODE`.execute(db);
    const any = await db.selectFrom("messages").select("id").limit(1).executeTakeFirst();
    if (any !== undefined) return false;
    const words = await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes
      WHERE schemaname = current_schema() AND indexname LIKE ${WORD_INDEX_PATTERN}`.execute(db);
    for (const name of [...SEARCH_INDEXES, ...words.rows.map((r) => r.name)])
      await sql`DROP INDEX IF EXISTS ${sql.ref(name)}`.execute(db);
    await sql`DELETE FROM search_word_ranges`.execute(db);
    return true;
  });
  await ctx.searchIndex.refresh();
  return deferred;
}

/**
 * Creates the missing search indexes (the split word index where RUM is installed: after a
 * bulk load, one sealed range of every row and an empty open range), then analyzes.
 */
export async function buildSearchIndexes(ctx: PgStoreContext): Promise<void> {
  await ctx.write(async (db) => {
    const rum = await ensureRum(db);
    await ensureWordIndexes(db, rum);
    for (const statement of searchIndexStatements({ rum })) await sql.raw(statement).execute(db);
  });
  await ctx.searchIndex.refresh();
  await ctx.write((db) => sql`ANALYZE messages`.execute(db), { transaction: false });
}

/**
 * Seals the word index's open range now (see `PostgresSessionStore.sealSearchIndex`); stores
 * do it on their own every `sealEvery` appends.
 */
export async function sealSearchIndex(
  ctx: PgStoreContext,
  o?: { force?: boolean; onStep?: (step: SealStep) => void | Promise<void> },
): Promise<SealReport> {
  const opts = options("options", o);
  if (opts.force !== undefined && typeof opts.force !== "boolean")
    throw new InvalidArgumentError("force", "force must be a boolean");
  if (opts.onStep !== undefined && typeof opts.onStep !== "function")
    throw new InvalidArgumentError("onStep", "onStep must be a function");
  ctx.check();
  try {
    return await ctx.searchIndex.seal({ force: opts.force ?? true, onStep: opts.onStep });
  } catch (error) {
    throw error instanceof SealStopped ? new StoreClosedError() : mapPgError(error);
  }
}
