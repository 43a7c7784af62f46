import type { QueryNode } from "@hermes/search";
import { type WordToken, wordTokensAt } from "./word-tokens.js";

/**
 * FTS5's `snippet()` rebuilt over PostgreSQL rows, so hits come back with the same `>>>`/`<<<`
 * excerpts as on SQLite: the algorithm is FTS5's as documented and observed, snippets of 40
 * tokens choosing the window with the most distinct phrases, preferring sentence starts.
 */

/** One phrase of a query: folded words (word index) or a substring (trigram index). */
export interface Phrase {
  readonly words: readonly string[];
  /** The last word is a prefix (`deploy*`). */
  readonly prefix: boolean;
}

/** The phrases of a query tree, left to right (negated ones included, as FTS5 counts them). */
export function queryPhrases(node: QueryNode): Phrase[] {
  switch (node.kind) {
    case "term": {
      const words = wordTokensAt(node.text).map((t) => t.text);
      return words.length === 0 ? [] : [{ words, prefix: node.prefix }];
    }
    case "and":
    case "or":
      return node.children.flatMap(queryPhrases);
    case "not":
      return [...queryPhrases(node.positive), ...node.negative.flatMap(queryPhrases)];
  }
}

/** Token boundaries of one column for a tokenizer. */
export type Tokenizer = (text: string) => WordToken[];

/**
 * FTS5's `trigram` tokenizer: every run of three characters (code points), case-folded;
 * a token's offsets span its three characters.
 */
export function trigramTokens(text: string): WordToken[] {
  const starts: number[] = [];
  for (let i = 0; i < text.length; ) {
    starts.push(i);
    const c = text.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length ? 2 : 1;
  }
  starts.push(text.length);
  const out: WordToken[] = [];
  for (let i = 0; i + 3 < starts.length; i++) {
    const start = starts[i]!;
    const end = starts[i + 3]!;
    out.push({ text: text.slice(start, end).toLowerCase(), start, end });
  }
  return out;
}

/** Phrases of a substring query for the trigram tokenizer. */
export function trigramPhrases(terms: readonly string[]): Phrase[] {
  return terms
    .filter((t) => [...t].length >= 3)
    .map((t) => ({ words: trigramTokens(t).map((x) => x.text), prefix: false }));
}

interface Instance {
  readonly phrase: number;
  readonly pos: number;
  readonly size: number;
}

/** Where each phrase occurs in a column's tokens, ordered by position. */
function instances(tokens: readonly WordToken[], phrases: readonly Phrase[]): Instance[] {
  const out: Instance[] = [];
  phrases.forEach((p, phrase) => {
    const n = p.words.length;
    for (let i = 0; i + n <= tokens.length; i++) {
      let ok = true;
      for (let j = 0; j < n && ok; j++) {
        const t = tokens[i + j]!.text;
        const w = p.words[j]!;
        ok = p.prefix && j === n - 1 ? t.startsWith(w) : t === w;
      }
      if (ok) out.push({ phrase, pos: i, size: n });
    }
  });
  return out.sort((a, b) => a.pos - b.pos || a.phrase - b.phrase);
}

/** Token positions that begin a sentence: the first, and any after `.` or `:` and whitespace. */
function sentenceStarts(text: string, tokens: readonly WordToken[]): number[] {
  const out: number[] = [];
  tokens.forEach((t, i) => {
    if (i === 0) {
      out.push(0);
      return;
    }
    let j = t.start - 1;
    while (j >= 0 && " \t\n\r".includes(text[j]!)) j--;
    if (j !== t.start - 1 && j >= 0 && (text[j] === "." || text[j] === ":")) out.push(i);
  });
  return out;
}

function windowScore(
  hits: readonly Instance[],
  docSize: number,
  from: number,
  nToken: number,
): { score: number; adjusted: number } {
  const seen = new Set<number>();
  let score = 0;
  let first = -1;
  let last = 0;
  for (const h of hits) {
    if (h.pos < from || h.pos >= from + nToken) continue;
    score += seen.has(h.phrase) ? 1 : 1000;
    seen.add(h.phrase);
    if (first < 0) first = h.pos;
    last = h.pos + h.size;
  }
  let adjusted = first - Math.trunc((nToken - (last - first)) / 2);
  if (adjusted + nToken > docSize) adjusted = docSize - nToken;
  if (adjusted < 0) adjusted = 0;
  return { score, adjusted };
}

/**
 * FTS5 `snippet(table, -1, '>>>', '<<<', '...', 40)` of a row: the best column's best window
 * of 40 tokens, with each (merged) phrase instance between the markers.
 */
export function fts5Snippet(
  columns: ReadonlyArray<string | null>,
  phrases: readonly Phrase[],
  tokenize: Tokenizer,
  nToken = 40,
): string {
  const cols = columns.map((text) => {
    const t = text ?? "";
    const tokens = tokenize(t);
    return { text: t, tokens, hits: instances(tokens, phrases) };
  });
  let best = { score: 0, col: 0, start: 0 };
  cols.forEach((c, i) => {
    const starts = sentenceStarts(c.text, c.tokens);
    for (const h of c.hits) {
      const s = windowScore(c.hits, c.tokens.length, h.pos, nToken);
      if (s.score > best.score) best = { score: s.score, col: i, start: s.adjusted };
      if (starts.length > 0 && c.tokens.length > nToken) {
        let jj = 0;
        while (jj < starts.length - 1 && starts[jj + 1]! <= h.pos) jj++;
        const first = starts[jj]!;
        if (first < h.pos) {
          const score = windowScore(c.hits, c.tokens.length, first, nToken).score + (first === 0 ? 120 : 100);
          if (score > best.score) best = { score, col: i, start: first };
        }
      }
    }
  });
  const c = cols[best.col];
  if (c === undefined) return "";
  return highlightWindow(c.text, c.tokens, c.hits, best.start, best.start + nToken - 1);
}

/** The text of tokens `from`..`to` with instances marked, `...` where the column goes on. */
function highlightWindow(
  text: string,
  tokens: readonly WordToken[],
  hits: readonly Instance[],
  from: number,
  to: number,
): string {
  // Instances merged where they overlap, as FTS5's instance iterator does.
  const spans: Array<{ start: number; end: number }> = [];
  for (const h of hits) {
    const end = h.pos + h.size - 1;
    const last = spans[spans.length - 1];
    if (last !== undefined && h.pos <= last.end) last.end = Math.max(last.end, end);
    else spans.push({ start: h.pos, end });
  }
  let k = 0;
  while (k < spans.length && spans[k]!.start < from) k++;
  let out = from > 0 ? "..." : "";
  let off = 0;
  let open = false;
  for (let pos = 0; pos < tokens.length; pos++) {
    const t = tokens[pos]!;
    if (pos < from || pos > to) continue;
    if (from > 0 && pos === from) off = t.start;
    const span = spans[k];
    if (open && (span === undefined || pos <= span.start) && t.start > off) {
      out += "<<<";
      open = false;
    }
    if (span !== undefined && pos === span.start && !open) {
      out += text.slice(off, t.start);
      out += ">>>";
      off = t.start;
      open = true;
    }
    if (span !== undefined && pos === span.end) {
      if (!open) {
        out += ">>>";
        open = true;
      }
      out += text.slice(off, t.end);
      off = t.end;
      k++;
    }
    if (pos === to) {
      if (open) {
        const next = spans[k];
        if (next !== undefined && pos >= next.start) {
          out += text.slice(off, t.end);
          off = t.end;
        }
        out += "<<<";
        open = false;
      }
      out += text.slice(off, t.end);
      off = t.end;
    }
  }
  if (open) out += "<<<";
  if (to >= tokens.length - 1) out += text.slice(off);
  else out += "...";
  return out;
}
