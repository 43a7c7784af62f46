/** One word of a text: its folded form and where it is (UTF-16 offsets of the original). */
export interface WordToken {
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

/** Receives a folded word and its UTF-16 offsets; `false` stops the scan. */
export type WordVisitor = (word: string, start: number, end: number) => unknown;

/** A run of word characters from where it is set (`lastIndex`), the run's other characters. */
const WORD_RUN = /[\p{L}\p{N}\p{Co}]+/uy;
const MARKS = /\p{M}+/gu;
const ASCII = /^[\x00-\x7f]*$/;

/**
 * Case-folds a word and removes its diacritics, as `unicode61` does. ASCII words have neither
 * marks nor decompositions: lower-cased only.
 */
function fold(word: string): string {
  if (ASCII.test(word)) return word.toLowerCase();
  return word.toLowerCase().normalize("NFD").replace(MARKS, "");
}

/** `c` (a UTF-16 unit below 0x80) is an ASCII letter or digit. */
function asciiWordChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
}

/**
 * Calls `visit` with each word of `text` as FTS5's `unicode61` tokenizer cuts them (the SQLite
 * store's word index): runs of letters, digits and private-use characters, case-folded,
 * diacritics removed; `start` and `end` are UTF-16 offsets of the run in `text`. Runs of ASCII
 * letters and digits (most words) are scanned by character code, the rest by a Unicode regex:
 * the same runs as matching that regex over the whole text, with fewer allocations (every
 * append tokenizes its message, every ranked hit its columns). Stops when `visit` returns `false`.
 */
export function eachWord(text: string, visit: WordVisitor): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if (!asciiWordChar(c)) {
        i++;
        continue;
      }
      const start = i;
      let upper = false;
      let d = c;
      while (i < n && d < 0x80 && asciiWordChar(d)) {
        if (d <= 0x5a && d >= 0x41) upper = true;
        d = text.charCodeAt(++i);
      }
      if (i < n && d >= 0x80) {
        // The run goes on past ASCII: the whole run by the regex.
        i = wordRunEnd(text, start);
        if (emit(text.slice(start, i), start, i, visit) === false) return;
        continue;
      }
      const word = text.slice(start, i);
      if (visit(upper ? word.toLowerCase() : word, start, i) === false) return;
      continue;
    }
    const end = wordRunEnd(text, i);
    if (end > i) {
      if (emit(text.slice(i, end), i, end, visit) === false) return;
      i = end;
      continue;
    }
    // Not a word character: step over its code point (both halves of a surrogate pair).
    const next = text.charCodeAt(i + 1);
    i += c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
  }
}

/** Where the run of word characters at `start` ends (`start` itself when there is none). */
function wordRunEnd(text: string, start: number): number {
  WORD_RUN.lastIndex = start;
  return WORD_RUN.test(text) ? WORD_RUN.lastIndex : start;
}

function emit(run: string, start: number, end: number, visit: WordVisitor): unknown {
  const folded = fold(run);
  return folded.length > 0 ? visit(folded, start, end) : undefined;
}

/**
 * Words of `text` as FTS5's `unicode61` tokenizer cuts them (see {@link eachWord}). Doing it
 * here rather than with a PostgreSQL text-search parser keeps `chat-send`, `P2.2` and
 * `kubectl_rollout` meaning on both backends what they mean on SQLite.
 */
export function wordTokensAt(text: string): WordToken[] {
  const out: WordToken[] = [];
  eachWord(text, (word, start, end) => {
    out.push({ text: word, start, end });
  });
  return out;
}

/** The folded words of `text` (see {@link wordTokensAt}). */
export function wordTokens(text: string): string[] {
  const out: string[] = [];
  eachWord(text, (word) => {
    out.push(word);
  });
  return out;
}
