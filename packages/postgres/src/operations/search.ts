import {
  InvalidArgumentError,
  optionsObject as options,
  type SearchHit,
  type SearchIndexProgress,
  type SearchIndexReport,
  type SearchMessagesOptions,
} from "@hermes/core";
import { substringExcerpt } from "@hermes/search";
import { type RawBuilder, sql } from "kysely";
import { anyText, collateC, type PgDb } from "../pg-database.js";
import { ensureRum, MESSAGE_GRAMS_BACKFILL_SQL, searchIndexStatements, usesRum } from "../pg-schema.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { fts5Snippet } from "../search/fts5-compat.js";
import { searchColumns } from "../search/pg-search-text.js";
import { searchArguments } from "../search/search-arguments.js";
import { hitContext, withContexts } from "../search/search-contexts.js";
import { searchQuery } from "../search/search-query.js";
import { messageCount } from "./sessions.js";

interface Filters {
  readonly sourceFilter: string[] | null;
  readonly excludeSources: string[] | null;
  readonly roleFilter: string[] | null;
}

/** The caller's filters on `m` and `s` as one condition (`true` without any). */
function filterCondition(f: Filters): RawBuilder<boolean> {
  const parts: RawBuilder<boolean>[] = [];
  if (f.sourceFilter !== null) parts.push(sql<boolean>`s.source = ${anyText(f.sourceFilter)}`);
  if (f.excludeSources !== null && f.excludeSources.length > 0)
    parts.push(sql<boolean>`NOT (s.source = ${anyText(f.excludeSources)})`);
  if (f.roleFilter !== null && f.roleFilter.length > 0)
    parts.push(sql<boolean>`m.role = ${anyText(f.roleFilter)}`);
  return parts.length === 0 ? sql<boolean>`true` : sql<boolean>`${sql.join(parts, sql` AND `)}`;
}

/** `messages m JOIN sessions s` with the search condition and the caller's filters. */
function matching(db: PgDb, where: RawBuilder<boolean>, f: Filters) {
  return db
    .selectFrom("messages as m")
    .innerJoin("sessions as s", "s.id", "m.session_id")
    .where(where)
    .where(filterCondition(f));
}

/** The columns of a hit (the snippet is made from content, tool calls and tool name). */
const HIT_COLUMNS = [
  "m.id",
  "m.session_id",
  "m.role",
  "m.content",
  "m.tool_calls",
  "m.timestamp",
  "m.tool_name",
  "s.source",
  "s.model",
  "s.started_at as session_started",
] as const;

/**
 * The page of a one-CJK-term query, newest first straight off `idx_message_grams`: a range
 * scan of the driving gram's entries in `(timestamp DESC, id)` order, each checked against the
 * query (exact for a one-gram term; the other pairs and the substring for longer terms),
 * that stops once the page is full (with a source filter, ties sorted by source then id
 * descending, as on SQLite, over that order).
 */
function gramPage(
  db: PgDb,
  gram: string,
  where: RawBuilder<boolean>,
  f: Filters,
  limit: number,
  offset: number,
) {
  return db
    .selectFrom("message_grams as g")
    .innerJoin("messages as m", "m.id", "g.message_id")
    .innerJoin("sessions as s", "s.id", "m.session_id")
    .where("g.gram", "=", gram)
    .where(where)
    .where(filterCondition(f))
    .select(HIT_COLUMNS)
    .orderBy("g.timestamp", "desc")
    .$if(f.sourceFilter === null, (qb) => qb.orderBy("g.message_id", "asc"))
    .$if(f.sourceFilter !== null, (qb) => qb.orderBy(collateC("s.source")).orderBy("m.id", "desc"))
    .limit(limit)
    .offset(offset);
}

/**
 * Full-text search with the SQLite store's syntax, hit sets and snippets: word queries through
 * the word index, ranked by PostgreSQL's relevance (`ts_rank`; with RUM, `search_vector <=>
 * query` reads the top hits off the index instead of scoring every match); CJK and substring
 * queries newest first, a query of one CJK term off the `message_grams` btree, others through
 * the gram and pg_trgm indexes with their matches sorted.
 */
export async function searchMessages(
  ctx: PgStoreContext,
  query: string,
  o?: SearchMessagesOptions,
): Promise<SearchHit[]> {
  const { plan, sourceFilter, excludeSources, roleFilter, limit, offset } = searchArguments(query, o);
  if (plan.kind === "empty" || limit === 0) return [];
  if (sourceFilter !== null && sourceFilter.length === 0) return [];
  ctx.check();
  const built = searchQuery(query, plan);
  if (built === null) return [];
  const filters = { sourceFilter, excludeSources, roleFilter };
  const rum = ctx.searchIndex.rum;
  // A longer CJK term checks each of its driving gram's messages (the other pairs, the
  // substring): the planner, estimating those checks as far more selective than they are,
  // would rather select every match and sort it, so this transaction turns bitmap scans and
  // sorts off (local settings). Disabled plans cost 1e10, past `jit_above_cost`: JIT off too.
  const steer = built.gram !== null && !built.gramExact;
  const run = async (db: PgDb) => {
    if (steer)
      await sql`SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true),
        set_config('jit', 'off', true)`.execute(db);
    const page =
      built.gram !== null
        ? gramPage(db, built.gram, built.gramExact ? sql<boolean>`true` : built.where, filters, limit, offset)
        : matching(db, built.where, filters)
            .select(HIT_COLUMNS)
            // Ranked: RUM's distance is 1 / ts_rank, read in order off the index; GIN sorts the matches.
            .$if(built.rankBy !== null && rum, (qb) =>
              qb.orderBy(sql`m.search_vector <=> ${built.rankBy}::tsquery`),
            )
            .$if(built.rankBy !== null && !rum, (qb) =>
              qb.orderBy(sql`ts_rank(m.search_vector, ${built.rankBy}::tsquery)`, "desc").orderBy("m.id"),
            )
            // Newest first; ties as the SQLite store orders them (the reference's own plan): by id
            // ascending, or with a source filter by source, then id descending (SQLite also orders by
            // the session's rowid there, which PostgreSQL lacks).
            .$if(built.rankBy === null && sourceFilter === null, (qb) =>
              qb.orderBy("m.timestamp", "desc").orderBy("m.id", "asc"),
            )
            .$if(built.rankBy === null && sourceFilter !== null, (qb) =>
              qb.orderBy("m.timestamp", "desc").orderBy(collateC("s.source")).orderBy("m.id", "desc"),
            )
            .limit(limit)
            .offset(offset);
    // The page and each hit's context in one statement; prepared where its text is one of a
    // few (ranked word queries and one-CJK-term pages: the terms are parameters).
    const { rows } = await withContexts(page, built.rankBy !== null || built.gram !== null).execute(db);
    return rows.map((row) => {
      const columns = [row.content, row.tool_calls, row.tool_name];
      const snippet =
        built.ranked !== null
          ? fts5Snippet(columns, built.ranked.phrases, built.ranked.tokenize)
          : substringExcerpt(columns, built.needles);
      return {
        id: row.id,
        session_id: row.session_id,
        role: row.role,
        snippet,
        timestamp: row.timestamp,
        tool_name: row.tool_name,
        source: row.source,
        model: row.model,
        session_started: row.session_started,
        context: hitContext(row),
      };
    });
  };
  // One statement, the page with its contexts (with its planner settings for a longer CJK term).
  return steer ? ctx.snapshot(run) : ctx.read(run);
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
          'idx_message_grams')`.execute(db)
    ).rows.map((r) => r.indexname);
    const status = (name: string, kind: "unicode61" | "trigram" | "short-cjk") => {
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
    const list = [
      status("idx_messages_search_vector", "unicode61"),
      status("idx_messages_search_trgm", "trigram"),
      status("idx_messages_search_grams", "short-cjk"),
      status("idx_message_grams", "short-cjk"),
    ];
    return { ok: list.every((s) => s.status === "ok"), indexes: list };
  });
}

/**
 * Recomputes every message's search columns, in transactions of 1,000 messages (one UPDATE
 * each), then recreates missing search indexes; with RUM installed since the schema was made,
 * the GIN indexes are rebuilt as RUM indexes.
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
  let after = 0;
  let done = 0;
  for (;;) {
    const n = await ctx.write(async (db) => {
      const rows = await db
        .selectFrom("messages")
        .select(["id", "content", "tool_calls", "tool_name"])
        .where("id", ">", after)
        .orderBy("id")
        .limit(1000)
        .execute();
      if (rows.length === 0) return 0;
      const columns = rows.map((r) => searchColumns(r.content, r.tool_calls, r.tool_name));
      await sql`UPDATE messages AS m SET search_vector = u.v::tsvector, search_grams = u.g::tsvector
        FROM unnest(${rows.map((r) => r.id)}::bigint[], ${columns.map((c) => c.vector)}::text[],
          ${columns.map((c) => c.grams)}::text[]) AS u(id, v, g)
        WHERE m.id = u.id`.execute(db);
      after = rows[rows.length - 1]!.id;
      return rows.length;
    });
    done += n;
    opts.onProgress?.({ index: "idx_messages_search_vector", done, total });
    if (n < 1000) break;
  }
  await ctx.write(async (db) => {
    const rum = await ensureRum(db);
    if (rum && !(await usesRum(db))) {
      await sql`DROP INDEX IF EXISTS idx_messages_search_vector`.execute(db);
      await sql`DROP INDEX IF EXISTS idx_messages_search_grams`.execute(db);
    }
    // The gram side table refilled from the recomputed columns (the triggers kept it in step
    // with the updates; this also repairs a table damaged by hand).
    await sql`DELETE FROM message_grams`.execute(db);
    await sql.raw(MESSAGE_GRAMS_BACKFILL_SQL).execute(db);
    for (const statement of searchIndexStatements({ rum })) await sql.raw(statement).execute(db);
    ctx.searchIndex.rum = await usesRum(db);
  });
}

/** The search indexes of `messages` and `message_grams` (dropped for a bulk load, see {@link deferSearchIndexes}). */
const SEARCH_INDEXES = [
  "idx_messages_search_vector",
  "idx_messages_search_grams",
  "idx_messages_search_trgm",
  "idx_message_grams",
];

/**
 * For a bulk load into an empty store (`migrate-to-postgres`): drops the search indexes, so
 * rows go in without per-row index maintenance (RUM has no pending list), and returns `true`;
 * a store holding messages is left alone (`false`). {@link buildSearchIndexes} brings them back
 * (as does `rebuildSearchIndex`, and `verifySearchIndex` reports them missing meanwhile).
 */
export async function deferSearchIndexes(ctx: PgStoreContext): Promise<boolean> {
  return ctx.write(async (db) => {
    await sql`LOCK TABLE messages IN SHARE ROW EXCLUSIVE MODE`.execute(db);
    const any = await db.selectFrom("messages").select("id").limit(1).executeTakeFirst();
    if (any !== undefined) return false;
    for (const name of SEARCH_INDEXES) await sql`DROP INDEX IF EXISTS ${sql.ref(name)}`.execute(db);
    return true;
  });
}

/** Creates the missing search indexes (RUM where installed), then analyzes `messages`. */
export async function buildSearchIndexes(ctx: PgStoreContext): Promise<void> {
  await ctx.write(async (db) => {
    const rum = await ensureRum(db);
    for (const statement of searchIndexStatements({ rum })) await sql.raw(statement).execute(db);
    ctx.searchIndex.rum = await usesRum(db);
  });
  await ctx.write((db) => sql`ANALYZE messages, message_grams`.execute(db), { transaction: false });
}
