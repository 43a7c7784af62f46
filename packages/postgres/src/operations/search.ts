import type { SearchHit, SearchMessagesOptions } from "@hermes/core";
import { substringExcerpt } from "@hermes/search";
import { type Expression, type RawBuilder, sql } from "kysely";
import { collateC, type PgDb } from "../pg-database.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { fts5Snippet } from "../search/fts5-compat.js";
import {
  filterCondition,
  HIT_COLUMNS,
  type HitRow,
  matching,
  type SearchFilters,
} from "../search/hit-rows.js";
import { rankedRangesPage } from "../search/ranked-page.js";
import { searchArguments } from "../search/search-arguments.js";
import { hitContext, withContexts } from "../search/search-contexts.js";
import { searchQuery } from "../search/search-query.js";

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
  f: SearchFilters,
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
 * query` reads the top hits of each sealed range off its index instead of scoring every
 * match, see `rankedRangesPage`); CJK and substring
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
  // A longer CJK term checks each of its driving gram's messages (the other pairs, the
  // substring): the planner, estimating those checks as far more selective than they are,
  // would rather select every match and sort it, so this transaction turns bitmap scans and
  // sorts off (local settings). Disabled plans cost 1e10, past `jit_above_cost`: JIT off too.
  const steer = built.gram !== null && !built.gramExact;
  const run = async (db: PgDb) => {
    // The split word index's ranges (none: the GIN layout) as the store last read them.
    const ranges = built.rankBy !== null ? await ctx.searchIndex.ranges(db) : [];
    if (steer)
      await sql`SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true),
        set_config('jit', 'off', true)`.execute(db);
    const page: Expression<HitRow> =
      built.gram !== null
        ? gramPage(db, built.gram, built.gramExact ? sql<boolean>`true` : built.where, filters, limit, offset)
        : built.rankBy !== null && ranges.length > 0
          ? rankedRangesPage(db, { where: built.where, rankBy: built.rankBy, filters, ranges, limit, offset })
          : matching(db, built.where, filters)
              .select(HIT_COLUMNS)
              // Ranked on the GIN layout: every match scored (ts_rank; RUM's `<=>` is 1 / ts_rank) and sorted.
              .$if(built.rankBy !== null, (qb) =>
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
    const split = built.rankBy !== null && ranges.length > 0;
    const { rows } = await withContexts(
      page,
      split ? "steered" : built.rankBy !== null || built.gram !== null,
    ).execute(db);
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
