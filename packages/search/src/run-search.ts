import type { SearchContextMessage, SearchHit } from "@hermes/core";
import type { SqlExecutor } from "@hermes/schema";
import { CJK_INDEX_TABLE } from "./cjk-index/cjk-index.js";
import { TRIGRAM_TABLE } from "./fts-ddl.js";
import { likePattern } from "./like-pattern.js";
import { newestMatchCandidates } from "./newest-first.js";
import {
  aroundQueue,
  type MatchRowSet,
  queuedMatches,
  type RowSet,
  type SearchPlan,
} from "./query/plan-search.js";
import { type QueryNode, queryTerms } from "./query/query-ast.js";
import {
  CONTEXT_SQL,
  filterSql,
  idListSearchSql,
  likeFilterSql,
  matchAmongSql,
  matchRowsSql,
  rankedSearchSql,
  type SearchFilters,
  scanRowsSql,
  substringSearchSql,
} from "./search-sql.js";

// The hit types are the session-store contract's (`@hermes/core`), re-exported here.
export type { SearchContextMessage, SearchHit };

/** Filters and paging of {@link runSearch}. */
export interface RunSearchOptions extends SearchFilters {
  readonly limit: number;
  readonly offset: number;
  /** Read each hit's context (default `true`); `false` leaves `context` empty. */
  readonly context?: boolean;
}

interface HitRow {
  id: number;
  session_id: string;
  role: string;
  snippet?: string;
  content: string | null;
  tool_calls?: string | null;
  timestamp: number;
  tool_name: string | null;
  source: string;
  model: string | null;
  session_started: number;
}

/** The first `n` code points of `text` (Python's `text[:n]`). */
export function firstCodePoints(text: string, n: number): string {
  if (text.length <= n) return text;
  let count = 0;
  let end = 0;
  for (const ch of text) {
    if (count === n) break;
    end += ch.length;
    count++;
  }
  return text.slice(0, end);
}

/**
 * The reference's `LIKE`-path excerpt: 120 characters from 40 before the first occurrence of
 * a needle, taken from `content`, else `tool_calls`, else `tool_name`, else `""`. Like SQLite's
 * `instr`, the search is case-sensitive and counts code points.
 */
export function substringExcerpt(
  columns: ReadonlyArray<string | null | undefined>,
  needles: readonly string[],
): string {
  for (const text of columns) {
    if (text === null || text === undefined || text.length === 0) continue;
    for (const needle of needles) {
      const at = text.indexOf(needle);
      if (at < 0) continue;
      const before = [...text.slice(0, at)].length;
      const start = Math.max(0, before - 40);
      return [...text].slice(start, start + 120).join("");
    }
  }
  return "";
}

function isFtsSyntaxError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : "";
  return /^fts5: syntax error|^fts5: parser stack overflow|^fts5 expression tree is too large|^unterminated string/.test(
    message,
  );
}

/**
 * Runs a {@link SearchPlan} and adds each hit's context. Only reads. A plan that uses the
 * short-CJK index needs it built and caught up first (the store does that).
 *
 * @example
 * const hits = runSearch(db, planSearch("docker"), { limit: 20, offset: 0 });
 */
export function runSearch(db: SqlExecutor, plan: SearchPlan, options: RunSearchOptions): SearchHit[] {
  if (plan.kind === "empty") return [];
  // The reference binds an empty source list as `IN ()`, which matches nothing.
  if (
    options.sourceFilter !== undefined &&
    options.sourceFilter !== null &&
    options.sourceFilter.length === 0
  ) {
    return [];
  }
  const filters = filterSql(options);
  let rows: HitRow[];
  try {
    if (plan.kind === "ranked") {
      rows = db.all<HitRow>(rankedSearchSql(plan.index, options), [
        plan.match,
        ...filters.params,
        options.limit,
        options.offset,
      ]);
    } else if (plan.rows.kind === "match") {
      rows = newestFirstPage(db, plan.rows, options);
    } else {
      const ids = rowSetIds(db, plan.rows);
      if (ids.length === 0) return [];
      rows = db.all<HitRow>(idListSearchSql(options), [
        JSON.stringify(ids),
        ...filters.params,
        options.limit,
        options.offset,
      ]);
    }
  } catch (error) {
    // Compiled queries are always valid FTS5; this only keeps the reference's promise
    // (a syntax error yields no rows) should that ever fail.
    if (isFtsSyntaxError(error)) return [];
    throw error;
  }
  return rows.map((row) => {
    const snippet =
      plan.kind === "ranked"
        ? (row.snippet ?? "")
        : substringExcerpt([row.content, row.tool_calls, row.tool_name], plan.needles);
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
      context: options.context === false ? [] : searchContext(db, row.id),
    };
  });
}

/**
 * One index's matches, newest first: off the index in id order with a proven early stop when
 * the timestamp blocks allow it (see `newestMatchCandidates`), else every match sorted. One
 * read transaction (a savepoint, which nests in a caller's transaction), so the rounds and
 * the page see one snapshot even while other processes write.
 */
function newestFirstPage(db: SqlExecutor, set: MatchRowSet, options: RunSearchOptions): HitRow[] {
  if (options.limit === 0) return [];
  const { index, match, queued } = set;
  const params = filterSql(options).params;
  db.exec("SAVEPOINT hermes_search_read");
  let rows: HitRow[];
  try {
    const need = options.offset + options.limit;
    let ids = newestMatchCandidates(db, index, match, options, need, queued && new Set(queued));
    // Read around the queue: the queued rows that match join the candidates, or (no proof)
    // every match is sorted.
    if (queued !== undefined)
      ids = ids === null ? rowSetIds(db, aroundQueue(set)) : [...ids, ...rowSetIds(db, queuedMatches(set))];
    if (ids === null) {
      rows = db.all<HitRow>(substringSearchSql(index, options), [
        match,
        ...params,
        options.limit,
        options.offset,
      ]);
    } else {
      rows =
        ids.length === 0
          ? []
          : db.all<HitRow>(idListSearchSql(options), [
              JSON.stringify(ids),
              ...params,
              options.limit,
              options.offset,
            ]);
    }
  } catch (error) {
    try {
      db.exec("RELEASE hermes_search_read");
    } catch {
      // The error being thrown says more.
    }
    throw error;
  }
  db.exec("RELEASE hermes_search_read");
  return rows;
}

const LIKE_PATTERNS_PER_STATEMENT = 16;

/**
 * The ids of a set that combines several indexes, computed set by set: each `MATCH` is a
 * statement of fixed text, so a connection that caches statements by text never sees one per
 * query structure, and no query can outgrow SQLite's compound-SELECT limit.
 */
export function rowSetIds(db: SqlExecutor, rows: RowSet): number[] {
  switch (rows.kind) {
    case "match":
      if (rows.queued !== undefined) return rowSetIds(db, aroundQueue(rows));
      return db.all<{ id: number }>(matchRowsSql(rows.index), [rows.match]).map((r) => r.id);
    case "scan":
      return db
        .all<{ id: number }>(scanRowsSql(), [rows.likePattern, rows.likePattern, rows.likePattern])
        .map((r) => r.id);
    case "ids":
      return [...rows.ids];
    case "filter":
      return likeAmong(db, rowSetIds(db, rows.rows), rows.likePatterns);
    case "compound": {
      if (rows.op === "UNION") return [...new Set(rows.parts.flatMap((p) => rowSetIds(db, p)))];
      // INTERSECT / EXCEPT: the other sets only matter on the first one's rows, so a `MATCH`
      // among them is asked about those candidates only (a common word next to a rare one
      // never materialises its whole doclist).
      const [head, ...rest] =
        rows.op === "INTERSECT" ? [...rows.parts].sort((a, b) => cost(a) - cost(b)) : rows.parts;
      if (head === undefined) return [];
      let ids = rowSetIds(db, head);
      for (const part of rest) {
        if (ids.length === 0) break;
        const other = new Set(restrictTo(db, part, ids));
        ids =
          rows.op === "INTERSECT" ? ids.filter((id) => other.has(id)) : ids.filter((id) => !other.has(id));
      }
      return ids;
    }
  }
}

/**
 * The ids among `candidates` that `part` contains. On a small candidate set, a conjunction of
 * trigram terms is a `LIKE` on those rows (the substring test the reference's LIKE path makes,
 * about a microsecond a row), another `MATCH` a per-row index lookup; otherwise the whole set.
 */
function restrictTo(db: SqlExecutor, part: RowSet, candidates: number[]): number[] {
  if (part.kind !== "match" || part.queued !== undefined || candidates.length > CANDIDATES_PER_LOOKUP)
    return rowSetIds(db, part);
  if (part.index === TRIGRAM_TABLE && isConjunction(part.node)) {
    return likeAmong(
      db,
      candidates,
      queryTerms(part.node).map((t) => likePattern(t.text)),
    );
  }
  return db
    .all<{ id: number }>(matchAmongSql(part.index), [JSON.stringify(candidates), part.match])
    .map((r) => r.id);
}

function isConjunction(node: QueryNode): boolean {
  return node.kind === "term" || (node.kind === "and" && node.children.every((c) => c.kind === "term"));
}

/** The candidates that contain every pattern, a few patterns per statement (SQLite caps expression depth). */
function likeAmong(db: SqlExecutor, candidates: number[], patterns: readonly string[]): number[] {
  let ids = candidates;
  for (let i = 0; i < patterns.length && ids.length > 0; i += LIKE_PATTERNS_PER_STATEMENT) {
    const chunk = patterns.slice(i, i + LIKE_PATTERNS_PER_STATEMENT);
    const params = [JSON.stringify(ids), ...chunk.flatMap((p) => [p, p, p])];
    ids = db.all<{ id: number }>(likeFilterSql(chunk.length), params).map((r) => r.id);
  }
  return ids;
}

/** Candidate sets up to this size are checked row by row instead of reading a whole set. */
const CANDIDATES_PER_LOOKUP = 20_000;

/** Rough evaluation order of an intersection: our short-CJK index first, scans last. */
function cost(rows: RowSet): number {
  switch (rows.kind) {
    case "match":
      return rows.index === CJK_INDEX_TABLE ? 1 : 2;
    case "filter":
      return cost(rows.rows) + 1;
    case "compound":
      return 4;
    case "scan":
      return 8;
    case "ids":
      return 0;
  }
}

/** Previous message, the message, next message of its session; `[]` if reading fails. */
export function searchContext(db: SqlExecutor, messageId: number): SearchContextMessage[] {
  try {
    return db
      .all<{ role: string; content: string | null }>(CONTEXT_SQL, [messageId, messageId])
      .map((r) => ({ role: r.role, content: firstCodePoints(r.content ?? "", 200) }));
  } catch {
    return [];
  }
}
