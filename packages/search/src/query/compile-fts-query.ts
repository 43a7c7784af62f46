import { referenceDropsLeadingNot, referenceSanitizeFts5Query } from "../reference-sanitize-fts5-query.js";
import {
  parseQueryTokens,
  type QueryNode,
  type QueryOperator,
  type QueryTerm,
  type QueryToken,
  renderFts5,
} from "./query-ast.js";

/**
 * Separators between words: Python's whitespace (what the reference splits on) and NUL.
 * A NUL never reaches FTS5: it ends a bound MATCH string early ("unterminated string"), so
 * the rest of the query would be ignored. Other control characters stay inside words, where
 * the tokenizer drops them (FTS5 reads `\x1aAND` as the word `and`, not as an operator).
 */
export const SEPARATOR_RE =
  /[\u0000\t\n\v\f\r\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;

/** Columns of the FTS tables; `column:term` filters on them are dropped, keeping the term. */
const FTS_COLUMNS = /^-?(content|tool_calls|tool_name)$/i;
const COLUMN_PREFIX = /^-?(content|tool_calls|tool_name):/i;

/**
 * Whether unicode61 (the tokenizer of `messages_fts`) finds at least one token in `text`:
 * it indexes letters, numbers and private-use characters and splits on everything else.
 * A term without one is an empty phrase, which FTS5 treats inconsistently (ignored next to
 * other terms, but it empties an explicit `AND`), so such terms are dropped.
 */
export function hasWordCharacter(text: string): boolean {
  return /[\p{L}\p{N}\p{Co}]/u.test(text);
}

const OPERATORS = new Set<string>(["AND", "OR", "NOT"]);
const SEPARATORS_G = new RegExp(SEPARATOR_RE.source, "gu");
/** Characters FTS5 accepts in a bareword (anything else outside quotes is a syntax error). */
const BAREWORD = /^[A-Za-z0-9_\u001a\u0080-\u{10ffff}]*$/u;

/**
 * Segments typed without a separator between them stay separate phrases when FTS5 would read
 * them so (`foo"bar baz"`: two phrases), and become one phrase when the reference's query is
 * a syntax error there (`user@"example.com"`, `"file.ts":42`, URLs): the user meant one thing.
 */
function joinGroup<S extends { text: string; quoted: boolean; prefix: boolean }>(group: S[]): S[] {
  if (group.length < 2 || group.every((s) => s.quoted || BAREWORD.test(s.text))) return group;
  const last = group[group.length - 1] as S;
  // Not quoted: a column prefix (`content:"x"`) is still recognised, and no operator can be joined.
  return [{ ...last, text: group.map((s) => s.text).join(""), quoted: false, prefix: last.prefix }];
}

/**
 * Splits a query (already through {@link referenceSanitizeFts5Query}) into terms and operators the way
 * FTS5 reads it: a balanced `"…"` is one phrase, `*` right after a term makes it a prefix,
 * uppercase `AND`/`OR`/`NOT` are operators, everything else between separators is a term.
 * Punctuation stays inside terms (`hello!`, `file.ts:42`): the tokenizer splits it away
 * inside a quoted phrase, where FTS5 syntax cannot choke on it.
 */
export function lexFtsQuery(sanitized: string): QueryToken[] {
  type Segment = { text: string; quoted: boolean; prefix: boolean };
  const words: Segment[] = [];
  // Segments typed without a separator between them (`user@"example.com"`).
  let group: Segment[] = [];
  let buf = "";
  const endSegment = (prefix: boolean) => {
    if (buf.length > 0) group.push({ text: buf, quoted: false, prefix });
    buf = "";
  };
  const endGroup = () => {
    endSegment(false);
    words.push(...joinGroup(group));
    group = [];
  };
  const chars = Array.from(sanitized);
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (SEPARATOR_RE.test(ch)) {
      endGroup();
    } else if (ch === "*") {
      endSegment(true);
      endGroup();
    } else if (ch === '"') {
      const close = chars.indexOf('"', i + 1);
      if (close === -1) {
        endGroup(); // an unbalanced quote is a separator, as in the reference
        continue;
      }
      endSegment(false);
      const text = chars.slice(i + 1, close).join("");
      i = close;
      const prefix = chars[i + 1] === "*";
      if (prefix) i++;
      group.push({ text: text.replace(SEPARATORS_G, " "), quoted: true, prefix });
      if (prefix) endGroup();
    } else {
      buf += ch;
    }
  }
  endGroup();

  const tokens: QueryToken[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as (typeof words)[number];
    if (!w.quoted && !w.prefix && OPERATORS.has(w.text)) {
      tokens.push({ kind: "op", op: w.text as QueryOperator });
      continue;
    }
    let text = w.text;
    if (!w.quoted) {
      // `content:x` and `content : x` are FTS5 column filters; the reference passes them
      // through (and fails on unknown columns). Searching every column instead finds at least
      // what the filter would, and never errors.
      const next = words[i + 1];
      if (FTS_COLUMNS.test(text) && next !== undefined && !next.quoted && next.text.startsWith(":")) {
        next.text = next.text.slice(1);
        continue;
      }
      text = text.replace(COLUMN_PREFIX, "");
    }
    tokens.push({ kind: "term", text, prefix: w.prefix });
  }
  return tokens;
}

/** Renders one term as an FTS5 string (inner quotes doubled), with `*` for a prefix. */
export function ftsTerm(term: QueryTerm): string {
  return `"${term.text.replace(/"/g, '""')}"${term.prefix ? "*" : ""}`;
}

/**
 * The terms and operators of a query for the unicode61 table (`messages_fts`): the reference's
 * sanitizer first (so every query it handles keeps its meaning), the leading `NOT` it removes put
 * back (it would otherwise search for what is excluded), and terms that hold no word dropped.
 */
export function ftsQueryTokens(query: string): QueryToken[] {
  const tokens = lexFtsQuery(referenceSanitizeFts5Query(query)).filter(
    (t) => t.kind === "op" || hasWordCharacter(t.text),
  );
  return referenceDropsLeadingNot(query) ? [LEADING_NOT, ...tokens] : tokens;
}

const LEADING_NOT: QueryToken = { kind: "op", op: "NOT" };

/**
 * Parses a query for the unicode61 table (`messages_fts`) from {@link ftsQueryTokens}, dangling
 * or doubled operators repaired. `null` when nothing searchable is left, or when the query only
 * excludes (`NOT docker`; see `repairOperators`).
 */
export function parseFtsQuery(query: string): QueryNode | null {
  return parseQueryTokens(ftsQueryTokens(query));
}

/**
 * Compiles user text into an FTS5 `MATCH` expression for `messages_fts` that FTS5 always
 * accepts. Every term is a quoted string, so punctuation typed inside or around a word
 * (`hello!`, `C#`, `it's`, `user@example.com`, `file.ts:42`, URLs) is split away by the
 * tokenizer instead of breaking the syntax; `col:x` filters, `NEAR(`, `^` and stray `*` lose
 * their special meaning; operators are repaired; groups are parenthesized so no input can
 * exceed FTS5's depth limit. Where the reference's query is valid, this one matches the same
 * rows (a column filter widens to all columns), except that a leading `NOT` still excludes.
 * Returns `""` when nothing searchable is left or the query only excludes.
 *
 * @example
 * compileFtsQuery("hello!")         // '"hello!"'
 * compileFtsQuery("a AND OR b")     // '"a" OR "b"'
 * compileFtsQuery("deploy*")        // '"deploy"*'
 */
export function compileFtsQuery(query: string): string {
  const tree = parseFtsQuery(query);
  return tree === null ? "" : renderFts5(tree, ftsTerm);
}
