import type { SqlExecutor } from "@hermes/schema";
import { FTS_TABLE } from "./fts-ddl.js";
import { parseFtsQuery } from "./query/compile-fts-query.js";
import { planSearch } from "./query/plan-search.js";
import { queryTerms } from "./query/query-ast.js";
import { recentCache } from "./recent-cache.js";

/** Runs of letters and digits: the words unicode61 would index (close enough to bound a cost). */
const WORD_RE = /[\p{L}\p{N}]+/gu;

const COUNT_SQL = `SELECT count(*) AS n FROM (SELECT rowid FROM ${FTS_TABLE} WHERE ${FTS_TABLE} MATCH ? LIMIT ?)`;

/**
 * A cheap upper bound on the work of a ranked `messages_fts` search: the number of rows that
 * contain each of the query's words, summed over every word, phrase and operand (negated ones
 * too, which FTS5 reads as well). Each word is counted in rowid order and the count stops past
 * `cap`, so the bound costs at most a few `cap`-row index walks, whatever the file's size.
 * Returns `cap + 1` once the sum passes `cap`, or for a prefix term (FTS5 reads every word it
 * stands for before the first row: counting would cost what the search does), and `null` for a
 * query this cannot bound (CJK, trigram, nothing to search).
 *
 * Ranking reads every matching row, so a query whose words occur in a few hundred rows at most
 * costs well under a millisecond whatever else it asks, while one common word can cost a hundred
 * (the store routes searches by it: `reads/read-router.ts`).
 */
export function ftsMatchBound(db: SqlExecutor, query: string, cap: number): number | null {
  const words = boundWords(query);
  if (words === null) return null;
  if (words === "prefix") return cap + 1;
  let total = 0;
  for (const word of words) {
    const row = db.get<{ n: number }>(COUNT_SQL, [word, cap + 1 - total]);
    total += row?.n ?? 0;
    if (total > cap) return cap + 1;
  }
  return total;
}

/**
 * The words {@link ftsMatchBound} counts, each as an FTS5 string; `"prefix"` for a query with a
 * prefix term (FTS5 merges every word it stands for before the first row: no cheap count).
 */
const boundWords = recentCache(64, (query): readonly string[] | "prefix" | null => {
  const plan = planSearch(query);
  if (plan.kind !== "ranked" || plan.index !== FTS_TABLE) return null;
  const tree = parseFtsQuery(query);
  if (tree === null) return null;
  const terms = queryTerms(tree);
  if (terms.some((t) => t.prefix)) return "prefix";
  return terms.flatMap((t) => (t.text.match(WORD_RE) ?? []).map((w) => `"${w}"`));
});
