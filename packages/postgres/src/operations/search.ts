import type { SearchHit, SearchMessagesOptions } from "@hermes/core";
import { substringExcerpt } from "@hermes/search";
import { type Expression, type RawBuilder, sql } from "kysely";
import { collateC, dollarQuoted, type PgDb } from "../pg-database.js";
import { GRAMS_PRESENT } from "../pg-schema.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { fts5Snippet } from "../search/fts5-compat.js";
import {
  type AgentView,
  HIT_COLUMNS,
  type HitRow,
  matching,
  type SearchFilters,
} from "../search/hit-rows.js";
import { gramMatch } from "../search/pg-search-text.js";
import { rankedRangesPage } from "../search/ranked-page.js";
import { searchArguments } from "../search/search-arguments.js";
import { hitContext, withContexts } from "../search/search-contexts.js";
import { searchQuery, wordMatch } from "../search/search-query.js";
import { StatementTemplates, slots } from "../search/statement-templates.js";
import { substringRangesCondition } from "../search/substring-ranges.js";
import type { WordRange } from "../search/word-ranges.js";
import { holdsAgentView } from "./agent-visibility.js";

/**
 * Matches of a newest-first query (CJK and substring), newest first; ties as the SQLite store
 * orders them (the reference's own plan): by id ascending, or with a source filter by source,
 * then id descending (SQLite also orders by the session's rowid there, which PostgreSQL lacks).
 */
function newestFirstPage(
  db: PgDb,
  where: RawBuilder<boolean>,
  f: SearchFilters,
  limit: number,
  offset: number,
) {
  return newestFirst(matching(db, where, f), f)
    .select(HIT_COLUMNS)
    .limit(limit)
    .offset(offset);
}

/** {@link newestFirstPage}'s order on the matches `qb`. */
function newestFirst(qb: ReturnType<typeof matching>, f: SearchFilters) {
  return qb
    .orderBy("m.timestamp", "desc")
    .$if(f.sourceFilter === null, (q) => q.orderBy("m.id", "asc"))
    .$if(f.sourceFilter !== null, (q) => q.orderBy(collateC("s.source")).orderBy("m.id", "desc"));
}

/**
 * {@link newestFirstPage} of the hits among the newest messages with CJK (`recent`), read in
 * `idx_messages_cjk_recent`'s order. With a source filter, whose ties sort by source then id
 * descending, all the window's hits are read in the index's order (a bounded walk), then sorted
 * into the page's: the steered plan has no sort-free way to that order, and would otherwise
 * sort every match.
 */
function recentPage(db: PgDb, recent: RawBuilder<boolean>, f: SearchFilters, limit: number, offset: number) {
  if (f.sourceFilter === null) return newestFirstPage(db, recent, f, limit, offset);
  const walked = matching(db, recent, f)
    .select(HIT_COLUMNS)
    .orderBy("m.timestamp", "desc")
    .orderBy("m.id", "asc");
  return db
    .selectFrom(walked.as("w"))
    .selectAll()
    .orderBy("w.timestamp", "desc")
    .orderBy(collateC("w.source"))
    .orderBy("w.id", "desc")
    .limit(limit)
    .offset(offset);
}

/**
 * How many of the newest messages (`among` all, or those with CJK) a page is first sought in:
 * enough for a term in one message of 50 with CJK, or of 200 of all, to fill it, and a bounded
 * walk when it is rarer.
 */
function recentWindow(limit: number, offset: number, among: "all" | "cjk"): number {
  return among === "cjk" ? Math.min(50 * (offset + limit), 10_000) : Math.min(200 * (offset + limit), 20_000);
}

/**
 * The messages (`among` all, or those with CJK) no older than the `n`th newest (all of them
 * when there are fewer): every hit among them precedes, newest first, every hit outside them.
 */
function withinRecent(where: RawBuilder<boolean>, n: number, among: "all" | "cjk"): RawBuilder<boolean> {
  const which = among === "cjk" ? sql`WHERE c.${sql.raw(GRAMS_PRESENT)}` : sql``;
  return sql<boolean>`${where} AND m.timestamp >= COALESCE((SELECT c.timestamp FROM messages c
    ${which} ORDER BY c.timestamp DESC LIMIT 1 OFFSET ${n - 1}), '-Infinity'::float8)`;
}

/**
 * Full-text search with the SQLite store's syntax, hit sets and snippets: word queries through
 * the word index, ranked by PostgreSQL's relevance (`ts_rank`; with RUM, `search_vector <=>
 * query` reads the top hits of each sealed range off its index instead of scoring every
 * match, see `rankedRangesPage`); CJK and substring queries newest first, through the gram
 * and pg_trgm indexes (on the split layout, pg_trgm's range by range: `substringRangesCondition`)
 * with their matches sorted, or down `idx_messages_cjk_recent` (the newest
 * messages with CJK) where the planner finds a CJK term common enough, or a longer CJK term's
 * page fills among the newest (see `longCjkTermPage`).
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
  const rows = async (db: PgDb) => {
    const agentView = await agentViewOf(db, o);
    const filters: SearchFilters = {
      sourceFilter,
      excludeSources,
      roleFilter,
      ...(agentView === undefined ? {} : { agentView }),
    };
    const { rankBy } = built;
    if (rankBy === null) {
      // A term of one or two characters is planned from its gram's statistics: a common one walks
      // `idx_messages_cjk_recent` newest first, a rare one is selected through the gram index.
      if (built.grams !== null) return gramPage(db, built.grams, filters, limit, offset);
      if (built.trigrams) {
        const ranges = await ctx.searchIndex.ranges(db);
        if (ranges.length > 0) return substringPage(db, built.where, ranges, filters, limit, offset);
      }
      if (!built.longCjkTerm)
        return withContexts(newestFirstPage(db, built.where, filters, limit, offset), false).execute(db);
      return longCjkTermPage(db, built.where, filters, limit, offset);
    }
    // The split word index's ranges (none: the GIN layout) as the store last read them.
    const ranges = await ctx.searchIndex.ranges(db);
    return db.executeQuery(rankedStatement(db, rankBy, filters, ranges, limit, offset));
  };
  const run = async (db: PgDb) =>
    (await rows(db)).rows.map((row) => {
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
        // A NULL reads as absent, as every read-model field here (see table-columns.ts).
        ...(row.message_uid === null || row.message_uid === undefined
          ? {}
          : { message_uid: row.message_uid }),
      };
    });
  // One statement, the page with its contexts; two for a gram query (see gramPage) and for a
  // longer CJK term or a substring query that falls back (the second page stands on its own,
  // so they need no common snapshot).
  return ctx.read(run);
}

/**
 * What a search leaves out on a newer agent's data (see `AgentView`), or `undefined` when the
 * store holds none (`holdsAgentView`: set by the imports that wrote flagged sessions or
 * superseded rows).
 */
async function agentViewOf(db: PgDb, o: SearchMessagesOptions | undefined): Promise<AgentView | undefined> {
  if (!(await holdsAgentView(db))) return undefined;
  return { excludeArchived: o?.includeArchived !== true, excludeHidden: o?.includeHidden !== true };
}

/** Which filters a search has, as part of a statement's shape (a filter's values are parameters). */
function filterShape(f: SearchFilters): string {
  const present = (v: readonly string[] | null) => (v === null ? "-" : v.length > 0 ? "+" : "0");
  const agent =
    f.agentView === undefined
      ? ""
      : `|a${Number(f.agentView.excludeArchived)}${Number(f.agentView.excludeHidden)}`;
  return `${present(f.sourceFilter)}${present(f.excludeSources)}${present(f.roleFilter)}${agent}`;
}

/** Stand-ins for the filters of a statement template (see `slots`), each input by its name. */
function slottedFilters(f: SearchFilters): SearchFilters {
  const slot = (v: readonly string[] | null, name: string) =>
    v === null ? null : v.length > 0 ? slots.array<string>(name) : [];
  return {
    sourceFilter: slot(f.sourceFilter, "sourceFilter"),
    excludeSources: slot(f.excludeSources, "excludeSources"),
    roleFilter: slot(f.roleFilter, "roleFilter"),
    ...(f.agentView === undefined ? {} : { agentView: f.agentView }),
  };
}

/** Statements by shape: ranked ones (word index ranges, filters) and gram ones (filters). */
const STATEMENTS = new StatementTemplates();

/**
 * The page of a ranked word query and each hit's context, one prepared statement (the terms,
 * filters and page bounds are parameters). Its text depends only on the ranges and on which
 * filters are present: built and compiled once per such shape (see `StatementTemplates`).
 */
function rankedStatement(
  db: PgDb,
  tsq: string,
  f: SearchFilters,
  ranges: readonly WordRange[],
  limit: number,
  offset: number,
) {
  const key = `ranked|${ranges.map((r) => `${r.lo}:${r.hi}`).join(",")}|${filterShape(f)}`;
  const inputs = { tsq, ...f, limit, offset, top: offset + limit };
  return STATEMENTS.compiled(db, key, inputs, () => {
    const rankBy = slots.value<string>("tsq");
    const where = wordMatch(rankBy);
    const filters = slottedFilters(f);
    const bounds = { limit: slots.value<number>("limit"), offset: slots.value<number>("offset") };
    const page: Expression<HitRow> =
      ranges.length > 0
        ? rankedRangesPage(db, { where, rankBy, filters, ranges, ...bounds, top: slots.value<number>("top") })
        : matching(db, where, filters)
            .select(HIT_COLUMNS)
            // Ranked on the GIN layout: every match scored (ts_rank; RUM's `<=>` is 1 / ts_rank) and sorted.
            .orderBy(sql`ts_rank(m.search_vector, ${rankBy}::tsquery)`, "desc")
            .orderBy("m.id")
            .limit(bounds.limit)
            .offset(bounds.offset);
    // Prepared: the statement's text does not depend on the terms.
    return withContexts(page, ranges.length > 0 ? "steered" : true);
  });
}

/**
 * The newest-first page of a gram query (terms of one or two characters holding CJK) with each
 * hit's context in one statement, `gramPage`'s fallback. Not prepared: the server plans it for
 * each query's grams; only building and compiling it is done once per filter shape.
 */
function gramStatement(db: PgDb, grams: string, f: SearchFilters, limit: number, offset: number) {
  return STATEMENTS.compiled(db, `grams|${filterShape(f)}`, { grams, ...f, limit, offset }, () =>
    withContexts(
      newestFirstPage(
        db,
        gramMatch(slots.value<string>("grams")),
        slottedFilters(f),
        slots.value<number>("limit"),
        slots.value<number>("offset"),
      ),
      false,
    ),
  );
}

/**
 * The page of a gram query in two statements, which the server plans in far less time than the
 * one they replace: the page's ids, planned for the query's grams and filters (literals, so the
 * plan fits them), then their rows with contexts, a prepared statement planned once. A hit
 * deleted between the two (fewer rows than ids) gets the page again in one statement.
 */
async function gramPage(db: PgDb, grams: string, f: SearchFilters, limit: number, offset: number) {
  const ids = await gramPageIds(db, grams, f, limit, offset);
  if (ids.length === 0) return { rows: [] };
  const page = await db.executeQuery(hitsByIds(db, ids));
  if (page.rows.length === ids.length) return page;
  return db.executeQuery(gramStatement(db, grams, f, limit, offset));
}

/**
 * The ids of a gram query's page, newest first: a statement without parameters (the connection
 * keeps its generic-plan setting), on `messages` alone when the search has no filter.
 */
async function gramPageIds(db: PgDb, grams: string, f: SearchFilters, limit: number, offset: number) {
  const where = gramMatch(sql.raw<string>(dollarQuoted(grams)));
  const filtered =
    f.sourceFilter !== null ||
    (f.excludeSources?.length ?? 0) > 0 ||
    (f.roleFilter?.length ?? 0) > 0 ||
    f.agentView !== undefined;
  const rows = filtered
    ? await newestFirst(matching(db, where, f, { literal: true }), f)
        .select("m.id")
        .limit(sql.lit(limit))
        .offset(sql.lit(offset))
        .execute()
    : await db
        .selectFrom("messages as m")
        .select("m.id")
        .where(where)
        .orderBy("m.timestamp", "desc")
        .orderBy("m.id")
        .limit(sql.lit(limit))
        .offset(sql.lit(offset))
        .execute();
  return rows.map((r) => r.id);
}

/** Hits by id, in the ids' order, with their contexts: one prepared statement. */
function hitsByIds(db: PgDb, ids: readonly number[]) {
  return STATEMENTS.compiled(db, "hits-by-ids", { ids }, () =>
    withContexts(
      sql<HitRow>`(SELECT ${sql.raw(HIT_COLUMNS.join(", "))}
        FROM unnest(${slots.value<number[]>("ids")}::bigint[]) WITH ORDINALITY AS k(id, ord)
        JOIN messages m ON m.id = k.id JOIN sessions s ON s.id = m.session_id ORDER BY k.ord)`,
      true,
    ),
  );
}

/**
 * A newest-first page sought first in a steered walk of the newest messages (`recent`, see
 * {@link withinRecent}): planned once, in the order of the walked index, it stops when the
 * page is full. Only when it does not fill there is the page planned as usual over `everywhere`.
 */
async function newestThenEverywhere(
  db: PgDb,
  recent: RawBuilder<boolean>,
  everywhere: RawBuilder<boolean>,
  filters: SearchFilters,
  limit: number,
  offset: number,
) {
  const near = await withContexts(recentPage(db, recent, filters, limit, offset), "steered").execute(db);
  if (near.rows.length === limit) return near;
  return withContexts(newestFirstPage(db, everywhere, filters, limit, offset), false).execute(db);
}

/**
 * The page of one CJK term of three or more characters, newest first. Its candidates (every
 * gram pair present) are checked as substrings, a check the planner takes for far more selective
 * than it is: planned alone, it would select and sort every candidate, most messages with CJK
 * for a common term. So the page is first sought among the newest messages with CJK, down
 * `idx_messages_cjk_recent`, as it soon fills for a common term. Only when it does not fill
 * there (a rare term) is the page planned for the term over every message: its candidates
 * selected through the GIN gram index, checked and sorted.
 */
function longCjkTermPage(
  db: PgDb,
  where: RawBuilder<boolean>,
  filters: SearchFilters,
  limit: number,
  offset: number,
) {
  const recent = withinRecent(where, recentWindow(limit, offset, "cjk"), "cjk");
  return newestThenEverywhere(db, recent, where, filters, limit, offset);
}

/**
 * The page of a substring query (see `needsTrigrams`) on the split layout, where the open range
 * has no trigram index (v9). First sought among the newest messages, down
 * `idx_messages_timestamp` (a common term fills it there); else read range by range
 * (`substringRangesCondition`: each sealed range through its trigram index, the open range off
 * the primary key) and sorted, as a rare term's few hits are.
 */
function substringPage(
  db: PgDb,
  where: RawBuilder<boolean>,
  ranges: readonly WordRange[],
  filters: SearchFilters,
  limit: number,
  offset: number,
) {
  const recent = withinRecent(where, recentWindow(limit, offset, "all"), "all");
  return newestThenEverywhere(db, recent, substringRangesCondition(where, ranges), filters, limit, offset);
}
