import { parseCjkQuery, parseFtsQuery, type planSearch, positiveTerms, queryTerms } from "@hermes/search";
import { type RawBuilder, sql } from "kysely";
import { type Phrase, queryPhrases, trigramPhrases, trigramTokens } from "./fts5-compat.js";
import {
  gramQuery,
  longCjkTerm,
  needsTrigrams,
  substringCondition,
  tsqueryLiteral,
} from "./pg-search-text.js";
import { wordTokensAt } from "./word-tokens.js";

/**
 * How `searchMessages` selects, orders and excerpts the rows of one query: ranked word
 * queries by PostgreSQL's relevance (`ts_rank`, read off the RUM index as `<=>`), CJK and
 * substring queries newest first.
 */
export interface SearchQuery {
  readonly where: RawBuilder<boolean>;
  /** The word query (`tsquery` literal) that ranks the rows, or `null` for newest first. */
  readonly rankBy: string | null;
  /**
   * A query of one all-CJK term of three or more characters: its page is first sought among the
   * newest messages with CJK (`longCjkTermPage`).
   */
  readonly longCjkTerm: boolean;
  /**
   * The query's one gram `tsquery` when all its terms are one or two characters holding CJK
   * (its `where` is then `gramMatch` of it), else `null`.
   */
  readonly grams: string | null;
  /**
   * Found through pg_trgm's index (see `needsTrigrams`): on the split layout, read range by
   * range (`substringRangesCondition`).
   */
  readonly trigrams: boolean;
  /** Snippet rules when the SQLite store ranks the query (FTS5 `snippet()`), else excerpts. */
  readonly ranked: { phrases: Phrase[]; tokenize: typeof wordTokensAt } | null;
  readonly needles: readonly string[];
}

/** The condition of a word query: the word index matches the `tsquery` literal `tsq`. */
export function wordMatch(tsq: string): RawBuilder<boolean> {
  return sql<boolean>`m.search_vector @@ ${tsq}::tsquery`;
}

/** The condition and ordering of a planned search, or `null` when nothing can match. */
export function searchQuery(
  query: string,
  plan: Exclude<ReturnType<typeof planSearch>, { kind: "empty" }>,
): SearchQuery | null {
  if (plan.kind === "ranked" && plan.index === "messages_fts") {
    const tree = parseFtsQuery(query);
    const tsq = tree === null ? null : tsqueryLiteral(tree);
    if (tree === null || tsq === null) return null;
    return {
      where: wordMatch(tsq),
      rankBy: tsq,
      longCjkTerm: false,
      grams: null,
      trigrams: false,
      ranked: { phrases: queryPhrases(tree), tokenize: wordTokensAt },
      needles: [],
    };
  }
  // The same tree the plan was made from (a leading NOT kept, as on SQLite).
  const tree = parseCjkQuery(query);
  if (tree === null) return null;
  // Three or more CJK characters (ranked by FTS5's trigram table on SQLite): the same hits,
  // newest first here, with FTS5's trigram snippets.
  const ranked =
    plan.kind === "ranked"
      ? { phrases: trigramPhrases(queryTerms(tree).map((t) => t.text)), tokenize: trigramTokens }
      : null;
  return {
    where: substringCondition(tree),
    rankBy: null,
    longCjkTerm: tree.kind === "term" && longCjkTerm(tree.text),
    grams: gramQuery(tree),
    trigrams: needsTrigrams(tree),
    ranked,
    needles: ranked === null ? positiveTerms(tree).map((t) => t.text) : [],
  };
}
