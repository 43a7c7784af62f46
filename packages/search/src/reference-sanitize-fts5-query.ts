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
const LEADING_NOT = new RegExp(`^NOT(?![${PY_W}])`, "u");
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
 * The reference's `_sanitize_fts5_query`, bit for bit: balanced quoted phrases are kept, FTS5
 * special characters `+ { } ( ) " ^` become spaces, runs of `*` collapse and a leading `*` is
 * dropped, one leading and one trailing `AND`/`OR`/`NOT` are removed, and dotted or hyphenated
 * terms (`chat-send`, `P2.2`) are wrapped in double quotes.
 *
 * Kept for compatibility checks (what the reference would search for): its output is not always
 * a query FTS5 accepts (`a AND OR b`, `foo:bar`, `e.g.`), and removing a leading `NOT` turns an
 * exclusion into an inclusion (`NOT docker` → `docker`). Use {@link sanitizeFts5Query} for a
 * `MATCH` string, `planSearch` to search.
 *
 * @example
 * referenceSanitizeFts5Query('fix chat-send bug') // 'fix "chat-send" bug'
 * referenceSanitizeFts5Query('C++')               // 'C'
 */
export function referenceSanitizeFts5Query(query: string): string {
  const { text, quoted } = stepsBeforeOperators(query);
  const s = pyStrip(pyStrip(text).replace(LEADING_OP, "")).replace(TRAILING_OP, "");
  return finish(s, quoted);
}

/**
 * Whether {@link referenceSanitizeFts5Query} removed a leading upper-case `NOT` from `query`,
 * so that the reference searches for what the user excluded. Only upper case is FTS5's
 * operator; a leading lower-case `not` is dropped as a word, as the reference does.
 */
export function referenceDropsLeadingNot(query: string): boolean {
  return LEADING_NOT.test(pyStrip(stepsBeforeOperators(query).text));
}

/** Rules 1–3 of the reference: quoted phrases set aside, specials and stars cleaned. */
function stepsBeforeOperators(query: string): { text: string; quoted: string[] } {
  const quoted: string[] = [];
  let s = query.replace(QUOTED, (m) => {
    quoted.push(m);
    return `\u0000Q${quoted.length - 1}\u0000`;
  });
  s = s.replace(SPECIALS, " ");
  s = s.replace(STARS, "*");
  s = s.replace(LEADING_STAR, "$1");
  return { text: s, quoted };
}

/** Rules 5–6: dotted terms quoted, phrases restored, trimmed. */
function finish(text: string, quoted: readonly string[]): string {
  const s = text.replace(DOTTED, '"$1"').replace(PLACEHOLDER, (_m, i: string) => quoted[Number(i)] ?? "");
  return pyStrip(s);
}
