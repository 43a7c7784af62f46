import { parseFtsQuery } from "./query/compile-fts-query.js";
import { type QueryTerm, renderFts5 } from "./query/query-ast.js";

/** A term FTS5 reads as itself without quotes: letters, digits, `_`; not an operator word. */
const BARE_TERM = /^[\p{L}\p{N}_]+$/u;
const KEYWORDS = new Set(["AND", "OR", "NOT", "NEAR"]);

function minimalTerm(term: QueryTerm): string {
  const text =
    BARE_TERM.test(term.text) && !KEYWORDS.has(term.text) ? term.text : `"${term.text.replace(/"/g, '""')}"`;
  return term.prefix ? `${text}*` : text;
}

/**
 * Turns user text into a query that FTS5 `MATCH` accepts, whatever the input: the reference's
 * rules first (`_sanitize_fts5_query`, see {@link referenceSanitizeFts5Query}), then what they
 * leave broken repaired. Punctuation in or around a word (`file.ts:42`, `-foo`, `e.g.`,
 * `foo:bar`) becomes a quoted phrase, dangling or doubled operators are repaired (`a AND OR b`
 * → `a OR b`), and a leading `NOT` keeps excluding (`NOT docker deploy` → `deploy NOT docker`).
 * Words stay bare, so a query the reference already handled reads the same.
 *
 * Returns `""` when nothing can be searched for: no word left (`***`), or the query only
 * excludes (`NOT docker`), which no `MATCH` expresses. Do not run `MATCH ''`.
 *
 * @example
 * sanitizeFts5Query('fix chat-send bug') // 'fix "chat-send" bug'
 * sanitizeFts5Query('a AND OR b')        // 'a OR b'
 * sanitizeFts5Query('file.ts:42')        // '"file.ts:42"'
 */
export function sanitizeFts5Query(query: string): string {
  const tree = parseFtsQuery(query);
  return tree === null ? "" : renderFts5(tree, minimalTerm);
}
