/**
 * Python's `str.isspace()` / `re` `\s` set for `str` patterns. JavaScript's `\s` differs
 * (it lacks U+001C–U+001F and U+0085, and has U+FEFF), and the sanitizer must give the
 * reference's output for the same input.
 */
const PY_WS = "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
/** Python's Unicode `\w`: letters, numbers, underscore. */
const PY_W = "\\p{L}\\p{N}_";

const QUOTED = /"[^"]*"/g;
const SPECIALS = /[+{}()"^]/g;
const STARS = /\*+/g;
const LEADING_STAR = new RegExp(`(^|[${PY_WS}])\\*`, "gu");
const LEADING_OP = new RegExp(`^(AND|OR|NOT)(?![${PY_W}])[${PY_WS}]*`, "iu");
const TRAILING_OP = new RegExp(`[${PY_WS}]+(AND|OR|NOT)[${PY_WS}]*$`, "iu");
const DOTTED = new RegExp(`(?<![${PY_W}])([${PY_W}]+(?:[.-][${PY_W}]+)+)(?![${PY_W}])`, "gu");
const PLACEHOLDER = /\u0000Q(\d+)\u0000/g;
const STRIP = new RegExp(`^[${PY_WS}]+|[${PY_WS}]+$`, "gu");

/** Python's `str.strip()`. */
export function pyStrip(text: string): string {
  return text.replace(STRIP, "");
}

/**
 * Makes user text safe-ish for an FTS5 `MATCH`, exactly as the reference's
 * `_sanitize_fts5_query` does: balanced quoted phrases are kept, FTS5 special characters
 * `+ { } ( ) " ^` become spaces, runs of `*` collapse and a leading `*` is dropped, one leading
 * and one trailing `AND`/`OR`/`NOT` are removed, and dotted or hyphenated terms (`chat-send`,
 * `P2.2`) are wrapped in double quotes.
 *
 * This is the reference's behaviour, kept bit for bit for compatibility; it can still return a
 * query FTS5 rejects (`a AND OR b`). `searchMessages` uses {@link compileFtsQuery}, which
 * repairs what this leaves broken.
 *
 * @example
 * sanitizeFts5Query('fix chat-send bug') // 'fix "chat-send" bug'
 * sanitizeFts5Query('C++')               // 'C'
 */
export function sanitizeFts5Query(query: string): string {
  const quoted: string[] = [];
  let s = query.replace(QUOTED, (m) => {
    quoted.push(m);
    return `\u0000Q${quoted.length - 1}\u0000`;
  });
  s = s.replace(SPECIALS, " ");
  s = s.replace(STARS, "*");
  s = s.replace(LEADING_STAR, "$1");
  s = pyStrip(s).replace(LEADING_OP, "");
  s = pyStrip(s).replace(TRAILING_OP, "");
  s = s.replace(DOTTED, '"$1"');
  s = s.replace(PLACEHOLDER, (_m, i: string) => quoted[Number(i)] ?? "");
  return pyStrip(s);
}
