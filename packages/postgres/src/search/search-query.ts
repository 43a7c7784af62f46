import { parseCjkQuery, parseFtsQuery, type planSearch, positiveTerms, queryTerms } from "@hermes/search";
import { type Expression, type RawBuilder, sql } from "kysely";
import type { PgDb } from "../pg-database.js";
import {
  BM25_B,
  BM25_K1,
  bm25Idf,
  type Phrase,
  queryPhrases,
  trigramPhrases,
  trigramTokens,
} from "./fts5-compat.js";
import { SEARCH_DOCUMENT_SQL, substringCondition, tsqueryLiteral, wordTokensAt } from "./pg-search-text.js";

/** bm25 corpus sizes of one store (row count, total document size), kept between searches. */
export type CorpusCache = Partial<Record<"words" | "trigrams", { rows: number; size: number; at: number }>>;

/** How `searchMessages` selects, scores and excerpts the rows of one query. */
export interface SearchQuery {
  where: Expression<boolean>;
  score: RawBuilder<number> | null;
  /** Per-row term frequencies over `unnest(lateralVector) u`, joined laterally as `fq.f0…`. */
  lateral: RawBuilder<number>[];
  lateralVector: RawBuilder<unknown>;
  ranked: { phrases: Phrase[]; tokenize: typeof wordTokensAt } | null;
  needles: readonly string[];
}

/** Row count and total document size of the corpus, for bm25 (exact, or cached for a minute on large tables). */
export async function corpusSize(
  cache: CorpusCache,
  db: PgDb,
  kind: "words" | "trigrams",
): Promise<{ rows: number; size: number }> {
  const cached = cache[kind];
  // Exact on small tables (where one message changes the ranking visibly); on large ones
  // the figures move slowly, and a minute-old value keeps each search from scanning them.
  if (cached !== undefined && cached.rows > 50_000 && performance.now() - cached.at < 60_000) return cached;
  const row = await db
    .selectFrom("messages")
    .select((eb) => [
      eb.fn.countAll<number>().as("rows"),
      eb.fn
        .coalesce(eb.fn.sum<number>(kind === "words" ? "search_tokens" : "search_trigrams"), sql.lit(0))
        .as("size"),
    ])
    .executeTakeFirst();
  const fresh = { rows: row?.rows ?? 0, size: row?.size ?? 0, at: performance.now() };
  cache[kind] = fresh;
  return fresh;
}

/**
 * The condition and score of a search: ranked plans score rows with FTS5's bm25 (k1 1.2,
 * b 0.75, whole-row sizes), CJK substring plans select with ILIKE on the pg_trgm index.
 */
export async function searchQuery(
  cache: CorpusCache,
  db: PgDb,
  query: string,
  plan: Exclude<ReturnType<typeof planSearch>, { kind: "empty" }>,
): Promise<SearchQuery | null> {
  const count = async (where: Expression<boolean>) =>
    (
      await db
        .selectFrom("messages as m")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where(where)
        .executeTakeFirst()
    )?.n ?? 0;
  if (plan.kind === "ranked" && plan.index === "messages_fts") {
    const tree = parseFtsQuery(query);
    const tsq = tree === null ? null : tsqueryLiteral(tree);
    if (tree === null || tsq === null) return null;
    const phrases = queryPhrases(tree);
    const corpus = await corpusSize(cache, db, "words");
    const avgdl = corpus.rows > 0 ? corpus.size / corpus.rows || 1 : 1;
    const terms: RawBuilder<number>[] = [];
    const lateral: RawBuilder<number>[] = [];
    // Frequencies are read from the row's vector cut down to the query's words (ts_filter of
    // the words marked with weight A; stored vectors carry no weights): the same positions,
    // without unnesting every word of the message. Prefix terms need the whole vector.
    const only = (words: readonly string[]) =>
      sql`ts_filter(setweight(m.search_vector, 'A', ${words}::text[]), '{a}')`;
    const singles = phrases.filter((p) => p.words.length === 1);
    const lateralVector = singles.some((p) => p.prefix)
      ? sql`m.search_vector`
      : only(singles.map((p) => p.words[0]!));
    for (const p of phrases) {
      const literal = p.words
        .map((w, i) => `'${w}'${p.prefix && i === p.words.length - 1 ? ":*" : ""}`)
        .join(" <-> ");
      const hits = await count(sql<boolean>`m.search_vector @@ ${literal}::tsquery`);
      if (p.words.length === 1) {
        const word = p.words[0]!;
        const test = p.prefix ? sql`starts_with(u.lexeme, ${word}::text)` : sql`u.lexeme = ${word}::text`;
        lateral.push(sql<number>`COALESCE(SUM(cardinality(u.positions)) FILTER (WHERE ${test}), 0)`);
      } else {
        // A phrase's occurrences: a function of the row, evaluated once in the lateral row.
        const vector = p.prefix ? sql`m.search_vector` : only(p.words);
        lateral.push(sql<number>`hermes_phrase_freq(${vector}, ${p.words}::text[], ${p.prefix}::boolean)`);
      }
      const f = sql<number>`${sql.ref(`fq.f${lateral.length - 1}`)}`;
      terms.push(bm25Term(bm25Idf(corpus.rows, hits), f, sql`COALESCE(m.search_tokens, 0)`, avgdl));
    }
    return {
      where: sql<boolean>`m.search_vector @@ ${tsq}::tsquery`,
      score: terms.length > 0 ? sql<number>`(${sql.join(terms, sql` + `)})` : sql<number>`(0)`,
      lateral,
      lateralVector,
      ranked: { phrases, tokenize: wordTokensAt },
      needles: [],
    };
  }
  // The same tree the plan was made from (a leading NOT kept, as on SQLite).
  const tree = parseCjkQuery(query);
  if (tree === null) return null;
  const condition = substringCondition(tree);
  if (plan.kind === "ranked") {
    // Three or more CJK characters, every term long enough for the trigram index: ranked.
    const texts = queryTerms(tree).map((t) => t.text);
    const phrases = trigramPhrases(texts);
    const corpus = await corpusSize(cache, db, "trigrams");
    const avgdl = corpus.rows > 0 ? corpus.size / corpus.rows || 1 : 1;
    const doc = sql`lower(${sql.raw(SEARCH_DOCUMENT_SQL)})`;
    const terms: RawBuilder<number>[] = [];
    for (const text of texts) {
      const hits = await count(substringCondition({ kind: "term", text, prefix: false }));
      const n = sql`${text.toLowerCase()}::text`;
      // Occurrences of the term in the row: how much shorter the text gets without it.
      const f = sql<number>`((char_length(${doc}) - char_length(replace(${doc}, ${n}, ''))) / GREATEST(char_length(${n}), 1))`;
      terms.push(bm25Term(bm25Idf(corpus.rows, hits), f, sql`COALESCE(m.search_trigrams, 0)`, avgdl));
    }
    return {
      where: condition,
      score: sql<number>`(${sql.join(terms, sql` + `)})`,
      lateral: [],
      lateralVector: sql`m.search_vector`,
      ranked: { phrases, tokenize: trigramTokens },
      needles: [],
    };
  }
  return {
    where: condition,
    score: null,
    lateral: [],
    lateralVector: sql`m.search_vector`,
    ranked: null,
    needles: positiveTerms(tree).map((t) => t.text),
  };
}

/** A number written into the SQL text (constants of the ranking, never user input). */
const num = (value: number) => sql.raw(String(value));

/** One term of bm25: `idf · f·(k1+1) / (f + k1·(1 − b + b·size/avgdl))`. */
function bm25Term(
  idf: number,
  f: RawBuilder<number>,
  size: RawBuilder<unknown>,
  avgdl: number,
): RawBuilder<number> {
  return sql<number>`${num(idf)} * (${f} * ${num(BM25_K1 + 1)}) / (${f} + ${num(BM25_K1)} * (${num(1 - BM25_B)} + ${num(BM25_B)} * ${size} / ${num(avgdl)}::double precision))`;
}
