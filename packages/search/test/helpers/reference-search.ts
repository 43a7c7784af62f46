import { containsCjk, referenceSanitizeFts5Query } from "@hermes/search";
import type Database from "better-sqlite3";
import { countCjk } from "../../dist/cjk.js";
import { pyStrip, referenceDropsLeadingNot } from "../../dist/reference-sanitize-fts5-query.js";

/** A hit as the reference returns it, without context. */
export interface ReferenceHit {
  id: number;
  snippet: string;
}

export interface ReferenceFilters {
  sourceFilter?: string[];
  excludeSources?: string[];
  roleFilter?: string[];
  limit?: number;
  offset?: number;
}

const PY_WS = /[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;

/**
 * Whether the reference's answer to `query` means what it says. Its trigram path silently
 * ignores terms shorter than three characters (FTS5 treats them as empty phrases), so
 * `hello 桂林 广西` returns every `hello` whether or not 桂林 and 广西 are there; such answers
 * are a bug we do not reproduce. So is an answer that ignored what follows a NUL, and one to a
 * query whose leading `NOT` the reference removed (it finds what the user excluded).
 */
export function referenceIsReliable(query: string): boolean {
  if (referenceDropsLeadingNot(query)) return false;
  const q = referenceSanitizeFts5Query(query);
  // FTS5 reads a MATCH string up to its first NUL: the rest of the query is silently ignored.
  if (q.includes("\u0000")) return false;
  if (!containsCjk(q)) return true;
  const raw = pyStrip(q.replace(/^"+|"+$/g, ""));
  if (countCjk(raw) < 3) return true;
  return (
    raw
      .split(PY_WS)
      // Only upper-case operators are operators to FTS5; a bare lower-case `or` is a short term.
      .filter((t) => t.length > 0 && !["AND", "OR", "NOT"].includes(t))
      .every((t) => [...t].length >= 3)
  );
}

const statements = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/** A prepared statement per SQL text (the property test runs 100,000 queries). */
function prepare(db: Database.Database, sql: string): Database.Statement {
  let cache = statements.get(db);
  if (cache === undefined) {
    cache = new Map();
    statements.set(db, cache);
  }
  let stmt = cache.get(sql);
  if (stmt === undefined) {
    stmt = db.prepare(sql);
    cache.set(sql, stmt);
  }
  return stmt;
}

/**
 * The reference's `search_messages` (SPEC.md §5), written out independently of our planner as
 * a test oracle: the same routing, the same SQL text, errors of the FTS paths → no rows.
 * `raw` is the reference's whole-query string for the CJK paths.
 */
export function referenceSearch(
  db: Database.Database,
  query: string,
  f: ReferenceFilters = {},
): ReferenceHit[] {
  if (pyStrip(query).length === 0) return [];
  const q = referenceSanitizeFts5Query(query);
  if (q.length === 0) return [];
  const where: string[] = [];
  const params: unknown[] = [];
  if (f.sourceFilter !== undefined) {
    where.push(`s.source IN (${f.sourceFilter.map(() => "?").join(",")})`);
    params.push(...f.sourceFilter);
  }
  if (f.excludeSources !== undefined) {
    where.push(`s.source NOT IN (${f.excludeSources.map(() => "?").join(",")})`);
    params.push(...f.excludeSources);
  }
  if (f.roleFilter !== undefined && f.roleFilter.length > 0) {
    where.push(`m.role IN (${f.roleFilter.map(() => "?").join(",")})`);
    params.push(...f.roleFilter);
  }
  const extra = where.map((w) => ` AND ${w}`).join("");
  const page = [f.limit ?? 20, f.offset ?? 0];
  const ranked = (table: string, match: string) => {
    const sql = `SELECT m.id, snippet(${table}, -1, '>>>', '<<<', '...', 40) AS snippet FROM ${table} JOIN messages m ON m.id = ${table}.rowid JOIN sessions s ON s.id = m.session_id WHERE ${table} MATCH ?${extra} ORDER BY rank LIMIT ? OFFSET ?`;
    try {
      return prepare(db, sql).all(match, ...params, ...page) as ReferenceHit[];
    } catch {
      return [];
    }
  };
  if (!containsCjk(q)) return ranked("messages_fts", q);
  const raw = pyStrip(q.replace(/^"+|"+$/g, ""));
  if (countCjk(raw) >= 3) {
    const parts = raw
      .split(PY_WS)
      .filter((t) => t.length > 0)
      .map((t) => (["AND", "OR", "NOT"].includes(t.toUpperCase()) ? t : `"${t.replace(/"/g, '""')}"`));
    return ranked("messages_fts_trigram", parts.join(" "));
  }
  const pattern = `%${raw.replace(/\\/g, "\\\\").replace(/%/g, "\\%").replace(/_/g, "\\_")}%`;
  const cut = (c: string) => `substr(${c}, max(1, instr(${c}, ?) - 40), 120)`;
  const sql = `SELECT m.id, CASE WHEN instr(m.content, ?) > 0 THEN ${cut("m.content")} WHEN m.tool_calls IS NOT NULL AND instr(m.tool_calls, ?) > 0 THEN ${cut("m.tool_calls")} WHEN m.tool_name IS NOT NULL AND instr(m.tool_name, ?) > 0 THEN ${cut("m.tool_name")} ELSE '' END AS snippet FROM messages m JOIN sessions s ON s.id = m.session_id WHERE (m.content LIKE ? ESCAPE '\\' OR m.tool_calls LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\')${extra} ORDER BY m.timestamp DESC LIMIT ? OFFSET ?`;
  return prepare(db, sql).all(
    ...Array(6).fill(raw),
    pattern,
    pattern,
    pattern,
    ...params,
    ...page,
  ) as ReferenceHit[];
}
