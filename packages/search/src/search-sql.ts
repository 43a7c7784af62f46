import { TIMESTAMP_BOUND_SQL } from "./cjk-index/timestamp-blocks.js";
import type { FTS_TABLE, TRIGRAM_TABLE } from "./fts-ddl.js";
import type { SearchIndexName } from "./query/plan-search.js";

/**
 * SQL text of every search query. The text depends only on the query's shape (which index,
 * how many filter values, how terms combine), never on values, so a connection that caches
 * prepared statements by text prepares each shape once.
 */

/** Filters of a search, as the reference applies them. */
export interface SearchFilters {
  /** `s.source IN (…)`; an empty list matches nothing (the reference's `IN ()`). */
  readonly sourceFilter?: readonly string[] | null | undefined;
  /** `s.source NOT IN (…)`. */
  readonly excludeSources?: readonly string[] | null | undefined;
  /** `m.role IN (…)`; an empty list means no filter (the reference tests it for truthiness). */
  readonly roleFilter?: readonly string[] | null | undefined;
  /**
   * `sessions` is a view (a store reading a newer agent's file through views of its own),
   * which has no rowid: ties that the reference breaks by session rowid are broken by id.
   */
  readonly sessionsView?: boolean | undefined;
  /**
   * A table or view (an SQL name, not user input) whose `id` column lists sessions to leave
   * out: `s.id NOT IN (SELECT id FROM …)`. A store reading a newer agent's file names the
   * sessions the agent flags hidden (or archived) this way.
   */
  readonly excludedSessions?: string | undefined;
}

const SQL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** SQL conditions and their parameters for `filters`, each prefixed with ` AND `. */
export function filterSql(filters: SearchFilters): { sql: string; params: string[] } {
  let sql = "";
  if (filters.excludedSessions !== undefined) {
    if (!SQL_NAME.test(filters.excludedSessions)) {
      throw new TypeError(`excludedSessions must be a plain SQL name, not ${filters.excludedSessions}`);
    }
    sql += ` AND s.id NOT IN (SELECT id FROM ${filters.excludedSessions})`;
  }
  const params: string[] = [];
  const marks = (n: number) => Array.from({ length: n }, () => "?").join(",");
  if (filters.sourceFilter !== undefined && filters.sourceFilter !== null) {
    sql += ` AND s.source IN (${marks(filters.sourceFilter.length)})`;
    params.push(...filters.sourceFilter);
  }
  if (filters.excludeSources !== undefined && filters.excludeSources !== null) {
    sql += ` AND s.source NOT IN (${marks(filters.excludeSources.length)})`;
    params.push(...filters.excludeSources);
  }
  if (filters.roleFilter !== undefined && filters.roleFilter !== null && filters.roleFilter.length > 0) {
    sql += ` AND m.role IN (${marks(filters.roleFilter.length)})`;
    params.push(...filters.roleFilter);
  }
  return { sql, params };
}

/**
 * The reference's ranked query on `messages_fts` or `messages_fts_trigram`: `MATCH ?`, the
 * filters, `snippet(…, -1, '>>>', '<<<', '...', 40)` (best column, 40 tokens), `ORDER BY rank
 * LIMIT ? OFFSET ?`. Parameters: the MATCH expression, the filter values, limit, offset.
 *
 * With the reference's sanitized query as the MATCH expression this is the plain FTS5 query a
 * raw baseline runs.
 */
export function rankedSearchSql(
  index: typeof FTS_TABLE | typeof TRIGRAM_TABLE,
  filters: SearchFilters = {},
): string {
  return (
    "SELECT m.id, m.session_id, m.role, " +
    `snippet(${index}, -1, '>>>', '<<<', '...', 40) AS snippet, ` +
    "m.content, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started " +
    `FROM ${index} JOIN messages m ON m.id = ${index}.rowid JOIN sessions s ON s.id = m.session_id ` +
    `WHERE ${index} MATCH ?${filterSql(filters).sql} ORDER BY rank LIMIT ? OFFSET ?`
  );
}

/** Ids of the messages one index matches (parameter: the MATCH expression). */
export function matchRowsSql(index: SearchIndexName): string {
  return `SELECT rowid AS id FROM ${index} WHERE ${index} MATCH ?`;
}

/**
 * Ids, out of a JSON array of candidate ids, that one index matches: one rowid lookup in the
 * index per candidate. Parameters: the JSON array, the MATCH expression.
 */
export function matchAmongSql(index: SearchIndexName): string {
  return `SELECT f.rowid AS id FROM json_each(?) j CROSS JOIN ${index} f ON f.rowid = j.value WHERE ${index} MATCH ?`;
}

/** Ids of the messages that contain a `LIKE` pattern (a full scan; parameters: pattern ×3). */
export function scanRowsSql(): string {
  return "SELECT id FROM messages WHERE content LIKE ? ESCAPE '\\' OR tool_calls LIKE ? ESCAPE '\\' OR tool_name LIKE ? ESCAPE '\\'";
}

/**
 * Ids, out of a JSON array of ids, of the messages that contain every one of `patterns`
 * substrings (`LIKE`, as the reference, on candidates only). Parameters: the JSON array, then
 * each pattern three times (content, tool_calls, tool_name).
 */
export function likeFilterSql(patterns: number): string {
  const one =
    " AND (content LIKE ? ESCAPE '\\' OR tool_calls LIKE ? ESCAPE '\\' OR tool_name LIKE ? ESCAPE '\\')";
  return `SELECT id FROM messages WHERE id IN (SELECT value FROM json_each(?))${one.repeat(patterns)}`;
}

/**
 * Messages matched by one index, newest first in the reference's order (see
 * {@link newestFirstOrderSql}). The excerpt is cut from the returned texts.
 * Parameters: the MATCH expression, the filter values, limit, offset.
 */
export function substringSearchSql(index: SearchIndexName, filters: SearchFilters = {}): string {
  return substringSelect(`SELECT rowid FROM ${index} WHERE ${index} MATCH ?`, filters);
}

/**
 * Like {@link substringSearchSql} for a set of ids computed beforehand (terms on different
 * indexes, or the candidates of `newestMatchCandidates`). Parameters: the ids as a JSON
 * array, the filter values, limit, offset.
 */
export function idListSearchSql(filters: SearchFilters = {}): string {
  return substringSelect("SELECT value FROM json_each(?)", filters);
}

/**
 * The `ORDER BY` of the reference's `LIKE` path, ties included. The reference orders by
 * `m.timestamp DESC` alone and SQLite's sorter keeps rows of equal timestamps in the order the
 * plan visits them (a `LIMIT` makes it a sorter that numbers rows as they come):
 * - without a source filter the plan scans `messages` in rowid order: ties by `m.id`;
 * - with `s.source IN (…)` it walks `idx_sessions_source` (sources in ascending order, then
 *   sessions by rowid) and each session's messages by `idx_messages_session` backwards
 *   (newest first, the `ORDER BY` direction): ties by `s.source, s.rowid, m.id DESC`.
 * The plans are SQLite's for the reference's query on a v11 file without `sqlite_stat1`; the
 * differential tests compare with that query on data full of ties.
 */
export function newestFirstOrderSql(filters: SearchFilters = {}): string {
  const viaSources = filters.sourceFilter !== undefined && filters.sourceFilter !== null;
  const session = filters.sessionsView === true ? "s.id" : "s.rowid";
  return viaSources
    ? `m.timestamp DESC, s.source ASC, ${session} ASC, m.id DESC`
    : "m.timestamp DESC, m.id ASC";
}

function substringSelect(ids: string, filters: SearchFilters): string {
  return (
    "SELECT m.id, m.session_id, m.role, m.content, m.tool_calls, m.timestamp, m.tool_name, " +
    "s.source, s.model, s.started_at AS session_started " +
    "FROM messages m JOIN sessions s ON s.id = m.session_id " +
    `WHERE m.id IN (${ids})${filterSql(filters).sql} ` +
    `ORDER BY ${newestFirstOrderSql(filters)} LIMIT ? OFFSET ?`
  );
}

/**
 * The newest `?` matches of one index by id (`ORDER BY rowid DESC LIMIT ?`: FTS5 reads the
 * doclist from its end, a cost proportional to the rows returned). Parameters: the MATCH
 * expression, the count.
 */
export function newestMatchIdsSql(index: SearchIndexName): string {
  return `SELECT rowid AS id FROM ${index} WHERE ${index} MATCH ? ORDER BY rowid DESC LIMIT ?`;
}

/**
 * How many of the candidate ids pass the filters with a timestamp above every message at or
 * below a block of ids (the bound of `hermes_search_ts_blocks`; none below counts as no
 * bound). Comparisons are SQLite's, as the reference's `ORDER BY`. Parameters: the block
 * index three times, the candidate ids as a JSON array, the filter values.
 */
export function newestProofSql(filters: SearchFilters = {}): string {
  return (
    `SELECT count(*) AS n FROM (${TIMESTAMP_BOUND_SQL}) b CROSS JOIN json_each(?) j ` +
    "CROSS JOIN messages m ON m.id = j.value CROSS JOIN sessions s ON s.id = m.session_id " +
    `WHERE m.timestamp IS NOT NULL AND (b.bound IS NULL OR m.timestamp > b.bound)${filterSql(filters).sql}`
  );
}

/**
 * The reference's `LIKE` scan for a one- or two-character CJK query (a full scan of
 * `messages`), for baselines. Parameters: the raw query six times (excerpt), the escaped
 * pattern `%…%` three times (`likePattern`), the filter values, limit, offset.
 */
export function likeSearchSql(filters: SearchFilters = {}): string {
  const cut = (col: string) => `substr(${col}, max(1, instr(${col}, ?) - 40), 120)`;
  return (
    "SELECT m.id, m.session_id, m.role, CASE " +
    `WHEN instr(m.content, ?) > 0 THEN ${cut("m.content")} ` +
    `WHEN m.tool_calls IS NOT NULL AND instr(m.tool_calls, ?) > 0 THEN ${cut("m.tool_calls")} ` +
    `WHEN m.tool_name IS NOT NULL AND instr(m.tool_name, ?) > 0 THEN ${cut("m.tool_name")} ` +
    "ELSE '' END AS snippet, m.content, m.timestamp, m.tool_name, s.source, s.model, " +
    "s.started_at AS session_started FROM messages m JOIN sessions s ON s.id = m.session_id " +
    "WHERE (m.content LIKE ? ESCAPE '\\' OR m.tool_calls LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\')" +
    `${filterSql(filters).sql} ORDER BY m.timestamp DESC LIMIT ? OFFSET ?`
  );
}

/**
 * Context of one hit, as the reference reads it: the previous message of the same session by
 * `(timestamp, id)`, the message itself, the next one. Parameters: the message id twice.
 */
export const CONTEXT_SQL =
  "WITH target AS (SELECT session_id, timestamp, id FROM messages WHERE id = ?) " +
  "SELECT role, content FROM (SELECT m.id, m.timestamp, m.role, m.content FROM messages m " +
  "JOIN target t ON t.session_id = m.session_id " +
  "WHERE (m.timestamp < t.timestamp) OR (m.timestamp = t.timestamp AND m.id < t.id) " +
  "ORDER BY m.timestamp DESC, m.id DESC LIMIT 1) " +
  "UNION ALL SELECT role, content FROM messages WHERE id = ? " +
  "UNION ALL SELECT role, content FROM (SELECT m.id, m.timestamp, m.role, m.content FROM messages m " +
  "JOIN target t ON t.session_id = m.session_id " +
  "WHERE (m.timestamp > t.timestamp) OR (m.timestamp = t.timestamp AND m.id > t.id) " +
  "ORDER BY m.timestamp ASC, m.id ASC LIMIT 1)";
