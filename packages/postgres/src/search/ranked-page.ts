import { type RawBuilder, sql } from "kysely";
import type { PgDb } from "../pg-database.js";
import { HIT_COLUMNS, type HitRow, matching, type SearchFilters } from "./hit-rows.js";
import { rangeCondition, type WordRange } from "./word-ranges.js";

/** A page of a ranked word query over the split word index (see {@link rankedRangesPage}). */
export interface RankedPageInput {
  /** The match condition on `m` (`m.search_vector @@ query`). */
  readonly where: RawBuilder<boolean>;
  /** The query as a `tsquery` literal (a parameter: the statement's text does not depend on it). */
  readonly rankBy: string;
  readonly filters: SearchFilters;
  /** The ranges, oldest first, the open one last (`WordIndex.ranges()`). */
  readonly ranges: readonly WordRange[];
  readonly limit: number;
  readonly offset: number;
  /** Rows each range contributes: `offset + limit` (its own input, so a template can slot it). */
  readonly top: number;
}

/**
 * One range's top `k` as a subquery: a sealed range read in order off its RUM index
 * (`ORDER BY search_vector <=> query` under the Limit: nothing but the top rows is read), the
 * open range's matches read through its GIN index and the top `k` kept (`<=>` computed per
 * row: the same measure, `1 / ts_rank`; ties by id). `hermes_pos` numbers the rows in the
 * range's order; `hermes_rank` is the distance made non-decreasing along that order (a running
 * maximum: equal to the distance when the index's order is the measure's, as it is), so that
 * (rank, range, position) orders every range's rows exactly as the range does.
 */
function rangeTop(db: PgDb, p: RankedPageInput, range: WordRange, k: number, index: number) {
  const distance = sql<number>`m.search_vector <=> ${p.rankBy}::tsquery`;
  const top = matching(db, sql<boolean>`${p.where} AND ${rangeCondition(range)}`, p.filters)
    .select([...HIT_COLUMNS, distance.as("hermes_distance")])
    .orderBy(distance)
    // Ties on the open range by id (its rows are sorted anyway); a sealed range keeps its
    // index's order, which a second key would make the server sort every match for.
    .$if(range.hi === null, (qb) => qb.orderBy("m.id"))
    .limit(k);
  return sql`SELECT t.*, ${sql.lit(index)}::int AS hermes_range, row_number() OVER () AS hermes_pos,
      max(t.hermes_distance) OVER (ROWS UNBOUNDED PRECEDING) AS hermes_rank
    FROM (${top}) AS t`;
}

/**
 * The page of a ranked word query on the split word index, one statement: each range's top
 * `offset + limit` (see {@link rangeTop}), merged by (rank, range, position in range). Each
 * range contributes a prefix of its own order, so a page is the slice of one fixed order of
 * all hits: pages never repeat or skip a hit, ties included. The ranges are literals of the
 * statement (partial indexes are matched by their predicates at planning), the terms
 * parameters.
 */
export function rankedRangesPage(db: PgDb, p: RankedPageInput) {
  const parts = p.ranges.map((range, i) => rangeTop(db, p, range, p.top, i));
  return sql<HitRow>`(SELECT u.* FROM (${sql.join(parts, sql` UNION ALL `)}) AS u
    ORDER BY u.hermes_rank, u.hermes_range, u.hermes_pos LIMIT ${p.limit} OFFSET ${p.offset})`;
}
