import { containsCjk, countCjk } from "../cjk.js";
import { cjkGramToken } from "../cjk-index/cjk-grams.js";
import { CJK_INDEX_TABLE } from "../cjk-index/cjk-index.js";
import { FTS_TABLE, TRIGRAM_TABLE } from "../fts-ddl.js";
import { likePattern } from "../like-pattern.js";
import { recentCache } from "../recent-cache.js";
import {
  pyStrip,
  referenceDropsLeadingNot,
  referenceSanitizeFts5Query,
} from "../reference-sanitize-fts5-query.js";
import { ftsQueryTokens, ftsTerm, hasWordCharacter, SEPARATOR_RE } from "./compile-fts-query.js";
import {
  parseQueryTokens,
  positiveTerms,
  type QueryNode,
  type QueryTerm,
  type QueryToken,
  queryTerms,
  renderFts5,
  repairOperators,
} from "./query-ast.js";

/** The three indexes a term can be served by. */
export type SearchIndexName = typeof FTS_TABLE | typeof TRIGRAM_TABLE | typeof CJK_INDEX_TABLE;

/** A set of message ids: one `MATCH` on one index, or a combination of sets. */
export type RowSet =
  | {
      readonly kind: "match";
      readonly index: SearchIndexName;
      readonly match: string;
      /** The query subtree the expression was rendered from. */
      readonly node: QueryNode;
      /**
       * Short-CJK index only: ids of messages queued for it (not current in it), read with
       * `LIKE` instead (see {@link withQueuedCjkRows}).
       */
      readonly queued?: readonly number[];
    }
  /** Messages that contain `pattern` (`LIKE`, a scan): the reference's way, a fallback only. */
  | { readonly kind: "scan"; readonly likePattern: string }
  /** Rows of `rows` that also contain every pattern (`LIKE`, on candidates only, never a scan). */
  | { readonly kind: "filter"; readonly rows: RowSet; readonly likePatterns: readonly string[] }
  | {
      readonly kind: "compound";
      readonly op: "INTERSECT" | "UNION" | "EXCEPT";
      readonly parts: readonly RowSet[];
    }
  /** These message ids (rows since deleted included: every use meets `messages` or subtracts). */
  | { readonly kind: "ids"; readonly ids: readonly number[] };

/**
 * How a query is answered.
 *
 * - `ranked`: one `MATCH` on `messages_fts` (no CJK) or `messages_fts_trigram` (three or more
 *   CJK characters, every term three characters or longer), `ORDER BY rank`, FTS5
 *   `snippet()`: the reference's own query, with a repaired `MATCH` expression.
 * - `substring`: CJK terms searched as substrings, each on the index that can serve it
 *   (trigram for three characters or more, the short-CJK index for one or two), combined with
 *   set operations; newest first with a 120-character excerpt, as the reference's `LIKE` path.
 * - `empty`: nothing searchable is left (blank, or only operators and punctuation), or the
 *   query only excludes (`NOT docker`; `negationOnly`), which no index can answer: a store
 *   refuses it (`INVALID_ARGUMENT`), since an empty answer would look like "no match".
 */
export type SearchPlan =
  | { readonly kind: "empty"; readonly negationOnly?: true }
  | {
      readonly kind: "ranked";
      readonly index: typeof FTS_TABLE | typeof TRIGRAM_TABLE;
      readonly match: string;
      readonly terms: readonly string[];
    }
  | {
      readonly kind: "substring";
      readonly rows: RowSet;
      /** Positive terms, in order: the excerpt starts at the first one found. */
      readonly needles: readonly string[];
      readonly terms: readonly string[];
      /** The plan reads the short-CJK index, which must exist and be caught up. */
      readonly usesCjkIndex: boolean;
    };

const OPERATOR_WORDS = new Set(["AND", "OR", "NOT"]);
const EDGE_PUNCTUATION = /^[\p{P}\p{S}]+|[\p{P}\p{S}]+$/gu;

/** Index that serves a CJK-mode term: trigram from three characters, else short-CJK or unicode61. */
function indexOfTerm(term: QueryTerm): SearchIndexName {
  const length = [...term.text].length;
  if (length >= 3) return TRIGRAM_TABLE;
  return containsCjk(term.text) ? CJK_INDEX_TABLE : FTS_TABLE;
}

/**
 * Splits a CJK query into substring terms and operators. As in the reference's CJK paths,
 * quotes only delimit; `AND`/`OR`/`NOT` are operators in upper case only (the reference passes
 * a lower-case `or` to FTS5 bare, where it is a word). Punctuation at the edges
 * of a term is dropped (`测试!` finds `测试`) unless the term is nothing else; `*` (prefix) is
 * implied by substring search. Terms of one or two non-CJK characters with no letter or digit
 * are dropped.
 */
export function lexCjkQuery(sanitized: string): QueryToken[] {
  const words = sanitized.split(new RegExp(`${SEPARATOR_RE.source}|"`, "u"));
  const tokens: QueryToken[] = [];
  for (const word of words) {
    if (word.length === 0) continue;
    if (OPERATOR_WORDS.has(word)) {
      tokens.push({ kind: "op", op: word as "AND" | "OR" | "NOT" });
      continue;
    }
    const trimmed = word.replace(EDGE_PUNCTUATION, "");
    const text = trimmed.length > 0 ? trimmed : word.replace(/^\*+|\*+$/g, "");
    if (text.length === 0) continue;
    const term: QueryTerm = { kind: "term", text, prefix: false };
    if (indexOfTerm(term) === FTS_TABLE && !hasWordCharacter(text)) continue;
    tokens.push(term);
  }
  return tokens;
}

function renderTerm(index: SearchIndexName): (t: QueryTerm) => string {
  switch (index) {
    case FTS_TABLE:
      // A short Latin term next to CJK text: the words it starts.
      return (t) => ftsTerm({ ...t, prefix: true });
    case TRIGRAM_TABLE:
      return (t) => `"${t.text.replace(/"/g, '""')}"`;
    case CJK_INDEX_TABLE:
      return (t) => cjkGramToken(t.text);
  }
}

/** One index per subtree where possible (one `MATCH`), set operations where indexes mix. */
function rowSet(node: QueryNode): RowSet {
  const sole = soleIndex(node);
  if (sole !== null) return { kind: "match", index: sole, match: renderFts5(node, renderTerm(sole)), node };
  switch (node.kind) {
    case "term":
      throw new Error("unreachable: a term has one index");
    case "and": {
      // A one- or two-character Latin term next to CJK terms ("AI 记忆") is a substring, as in
      // the reference's LIKE: checked on the rows the other terms select, never by a scan.
      const short = node.children.filter(
        (c): c is QueryTerm => c.kind === "term" && indexOfTerm(c) === FTS_TABLE,
      );
      const rest = node.children.filter((c) => c.kind !== "term" || indexOfTerm(c) !== FTS_TABLE);
      if (short.length > 0 && rest.length > 0) {
        const rows =
          rest.length === 1 ? rowSet(rest[0] as QueryNode) : rowSet({ kind: "and", children: rest });
        return { kind: "filter", rows, likePatterns: short.map((t) => likePattern(t.text)) };
      }
      return { kind: "compound", op: "INTERSECT", parts: node.children.map(rowSet) };
    }
    case "or":
      return { kind: "compound", op: "UNION", parts: node.children.map(rowSet) };
    case "not":
      return { kind: "compound", op: "EXCEPT", parts: [node.positive, ...node.negative].map(rowSet) };
  }
}

function soleIndex(node: QueryNode): SearchIndexName | null {
  const indexes = new Set(queryTerms(node).map(indexOfTerm));
  return indexes.size === 1 ? ([...indexes][0] as SearchIndexName) : null;
}

function usesIndex(rows: RowSet, index: SearchIndexName): boolean {
  switch (rows.kind) {
    case "match":
      return rows.index === index;
    case "scan":
    case "ids":
      return false;
    case "filter":
      return usesIndex(rows.rows, index);
    case "compound":
      return rows.parts.some((p) => usesIndex(p, index));
  }
}

/**
 * The terms and operators of a query with CJK text, from the reference's sanitized text (as in
 * the reference, quotes only delimit) with the leading `NOT` it removes put back.
 */
export function cjkQueryTokens(query: string): QueryToken[] {
  const tokens = lexCjkQuery(referenceSanitizeFts5Query(query));
  return referenceDropsLeadingNot(query) ? [{ kind: "op", op: "NOT" }, ...tokens] : tokens;
}

/** Parses a query with CJK text (see {@link cjkQueryTokens}); `null` as `parseQueryTokens`. */
export function parseCjkQuery(query: string): QueryNode | null {
  return parseQueryTokens(cjkQueryTokens(query));
}

/**
 * Decides how to answer `query`. The reference's routing is kept (its sanitizer first; no CJK
 * → unicode61; CJK → substring semantics), with these repairs: the `MATCH` expression is
 * always valid; CJK queries are routed per term (so `广西 OR 桂林` and `记忆 docker` find what
 * they say), and one- and two-character CJK terms come from the short-CJK index instead of a
 * `LIKE` scan.
 *
 * @example
 * planSearch("docker deploy")  // { kind: "ranked", index: "messages_fts", match: '"docker" "deploy"', … }
 * planSearch("广西 OR 桂林")     // { kind: "substring", rows: { kind: "match", index: "hermes_search_cjk", … } }
 */
export function planSearch(query: string): SearchPlan {
  return recentPlans(query);
}

/**
 * Plans kept by query text: a search is planned where it is routed and again where it runs
 * (10–40 µs each, a tenth of a cheap search), and a server sees the same queries again.
 */
const recentPlans = recentCache(64, (query) => Object.freeze(planQuery(query)));

function planQuery(query: string): SearchPlan {
  if (pyStrip(query).length === 0) return { kind: "empty" };
  const sanitized = referenceSanitizeFts5Query(query);
  if (sanitized.length === 0) return { kind: "empty" };
  const cjk = containsCjk(sanitized);
  const repaired = repairOperators(cjk ? cjkQueryTokens(query) : ftsQueryTokens(query));
  if (repaired === null) return { kind: "empty", negationOnly: true };
  const tree = parseQueryTokens(repaired);
  if (tree === null) return { kind: "empty" };

  if (!cjk) {
    return {
      kind: "ranked",
      index: FTS_TABLE,
      match: renderFts5(tree, ftsTerm),
      terms: queryTerms(tree).map((t) => t.text),
    };
  }

  const terms = queryTerms(tree).map((t) => t.text);
  // The reference counts CJK characters over the whole query (quotes stripped): three or
  // more and it ranks with the trigram table. Where every term can be served there, so do we.
  const raw = pyStrip(sanitized.replace(/^"+|"+$/g, ""));
  if (countCjk(raw) >= 3 && soleIndex(tree) === TRIGRAM_TABLE) {
    return {
      kind: "ranked",
      index: TRIGRAM_TABLE,
      match: renderFts5(tree, renderTerm(TRIGRAM_TABLE)),
      terms,
    };
  }
  const rows = rowSet(tree);
  return {
    kind: "substring",
    rows,
    needles: positiveTerms(tree).map((t) => t.text),
    terms,
    usesCjkIndex: usesIndex(rows, CJK_INDEX_TABLE),
  };
}

function scanRows(node: QueryNode): RowSet {
  switch (node.kind) {
    case "term":
      return { kind: "scan", likePattern: likePattern(node.text) };
    case "and":
      return { kind: "compound", op: "INTERSECT", parts: node.children.map(scanRows) };
    case "or":
      return { kind: "compound", op: "UNION", parts: node.children.map(scanRows) };
    case "not":
      return { kind: "compound", op: "EXCEPT", parts: [node.positive, ...node.negative].map(scanRows) };
  }
}

function withoutCjkIndex(rows: RowSet): RowSet {
  switch (rows.kind) {
    case "match":
      return rows.index === CJK_INDEX_TABLE ? scanRows(rows.node) : rows;
    case "scan":
    case "ids":
      return rows;
    case "filter":
      return { ...rows, rows: withoutCjkIndex(rows.rows) };
    case "compound":
      return { ...rows, parts: rows.parts.map(withoutCjkIndex) };
  }
}

/**
 * The rows of `node` among `ids` only: its terms tested with `LIKE` on those rows (the scan's
 * semantics, without the scan).
 */
function scanAmong(node: QueryNode, ids: RowSet): RowSet {
  switch (node.kind) {
    case "term":
      return { kind: "filter", rows: ids, likePatterns: [likePattern(node.text)] };
    case "and":
      return { kind: "compound", op: "INTERSECT", parts: node.children.map((c) => scanAmong(c, ids)) };
    case "or":
      return { kind: "compound", op: "UNION", parts: node.children.map((c) => scanAmong(c, ids)) };
    case "not":
      return {
        kind: "compound",
        op: "EXCEPT",
        parts: [node.positive, ...node.negative].map((c) => scanAmong(c, ids)),
      };
  }
}

/** A `match` row set with queued ids (the short-CJK index's) as one without them. */
export type MatchRowSet = Extract<RowSet, { kind: "match" }>;

/** The queued rows of a short-CJK `match` that match it, by `LIKE` on those rows only. */
export function queuedMatches(rows: MatchRowSet): RowSet {
  return scanAmong(rows.node, { kind: "ids", ids: rows.queued ?? [] });
}

/** A short-CJK `match` read around its queue: the index's matches not queued, plus {@link queuedMatches}. */
export function aroundQueue(rows: MatchRowSet): RowSet {
  const { index, match, node } = rows;
  const queued: RowSet = { kind: "ids", ids: rows.queued ?? [] };
  return {
    kind: "compound",
    op: "UNION",
    parts: [
      { kind: "compound", op: "EXCEPT", parts: [{ kind: "match", index, match, node }, queued] },
      queuedMatches(rows),
    ],
  };
}

function withQueuedRows(rows: RowSet, queued: readonly number[]): RowSet {
  switch (rows.kind) {
    case "match":
      // Read as `aroundQueue` wherever its ids are needed; a page of it alone, newest first.
      return rows.index === CJK_INDEX_TABLE ? { ...rows, queued } : rows;
    case "scan":
    case "ids":
      return rows;
    case "filter":
      return { ...rows, rows: withQueuedRows(rows.rows, queued) };
    case "compound":
      return { ...rows, parts: rows.parts.map((p) => withQueuedRows(p, queued)) };
  }
}

/**
 * The same plan answered from a short-CJK index that is built but behind: every message whose
 * id is not in `queued` (the index's queue of changed messages) is current in the index; the
 * queued ones are tested with `LIKE` on their current rows. Exact, read-only, and a substring
 * test on `queued.length` rows instead of a scan of every message. A single short-CJK match is
 * still read newest first off the index (the timestamp blocks bound every message not queued);
 * combinations sort their matches.
 */
export function withQueuedCjkRows(plan: SearchPlan, queued: readonly number[]): SearchPlan {
  if (plan.kind !== "substring" || !plan.usesCjkIndex) return plan;
  return { ...plan, rows: withQueuedRows(plan.rows, queued) };
}

/**
 * The same plan with short CJK terms answered by the reference's `LIKE` scan instead of the
 * short-CJK index: the fallback when the index cannot be brought up to date (a read-only
 * file, a writer holding the lock past the deadline). Slow on large files, but right.
 */
export function withoutShortCjkIndex(plan: SearchPlan): SearchPlan {
  if (plan.kind !== "substring" || !plan.usesCjkIndex) return plan;
  return { ...plan, rows: withoutCjkIndex(plan.rows), usesCjkIndex: false };
}
