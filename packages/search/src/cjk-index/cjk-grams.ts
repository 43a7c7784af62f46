import { isCjkCodePoint } from "../cjk.js";

/**
 * Python whitespace and C0 controls: never part of a query term, so pairs that contain one
 * are not indexed.
 */
function isSeparator(cp: number): boolean {
  return (
    cp <= 0x20 ||
    cp === 0x7f ||
    cp === 0x85 ||
    cp === 0xa0 ||
    cp === 0x1680 ||
    (cp >= 0x2000 && cp <= 0x200a) ||
    cp === 0x2028 ||
    cp === 0x2029 ||
    cp === 0x202f ||
    cp === 0x205f ||
    cp === 0x3000
  );
}

/** SQLite's `LIKE` folds ASCII letters only; the index folds the same way. */
function fold(cp: number): number {
  return cp >= 0x41 && cp <= 0x5a ? cp + 0x20 : cp;
}

function token(cps: readonly number[]): string {
  let out = "";
  for (const cp of cps) out += `x${cp.toString(16)}`;
  return out;
}

/**
 * The index token of a one- or two-character term: each code point (ASCII letters folded to
 * lower case) as `x` + hex, so any character, CJK punctuation included, becomes a plain ASCII
 * word that FTS5's `ascii` tokenizer keeps whole.
 *
 * @example cjkGramToken("测试") // "x6d4bx8bd5"
 */
export function cjkGramToken(term: string): string {
  const cps: number[] = [];
  for (const ch of term) cps.push(fold(ch.codePointAt(0) ?? 0));
  return token(cps);
}

/**
 * The tokens of one message for the short-CJK index: every CJK character (unigram) and every
 * pair of adjacent characters with at least one CJK character (bigram), taken from
 * `content`, `tool_calls` and `tool_name` separately, each once. A message contains a one- or
 * two-character CJK term as a substring exactly when its token is here. `null` when the
 * message has no CJK character (nothing to index).
 */
export function cjkGramDocument(values: ReadonlyArray<string | null | undefined>): string | null {
  const seen = new Set<string>();
  for (const value of values) {
    if (value === null || value === undefined || value.length === 0) continue;
    let prev = -1;
    let prevCjk = false;
    for (const ch of value) {
      const cp = ch.codePointAt(0) ?? 0;
      if (isSeparator(cp)) {
        prev = -1;
        prevCjk = false;
        continue;
      }
      const cjk = isCjkCodePoint(cp);
      const folded = fold(cp);
      if (cjk) seen.add(token([folded]));
      if (prev !== -1 && (cjk || prevCjk)) seen.add(token([prev, folded]));
      prev = folded;
      prevCjk = cjk;
    }
  }
  return seen.size === 0 ? null : [...seen].join(" ");
}
