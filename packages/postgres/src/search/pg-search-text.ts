import { containsCjk, isCjkCodePoint, type QueryNode } from "@hermes/search";
import { type RawBuilder, sql } from "kysely";

/** tsvector positions stop at 16383 (PostgreSQL's limit); later words share the last position. */
const MAX_POSITION = 16_383;
/** Longest lexeme PostgreSQL accepts, in bytes. */
const MAX_LEXEME_BYTES = 2_046;
/** Keeps a tsvector well under PostgreSQL's 1 MB limit; words past it are not indexed. */
const MAX_VECTOR_CHARS = 900_000;

const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;
const MARKS = /\p{M}+/gu;

/** One word of a text: its folded form and where it is (UTF-16 offsets of the original). */
export interface WordToken {
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

/** Case-folds a word and removes its diacritics, as `unicode61` does. */
function fold(word: string): string {
  return word.toLowerCase().normalize("NFD").replace(MARKS, "");
}

/**
 * Words of `text` as FTS5's `unicode61` tokenizer cuts them (the SQLite store's word index):
 * runs of letters, digits and private-use characters, case-folded, diacritics removed. Doing it
 * here rather than with a PostgreSQL text-search parser keeps `chat-send`, `P2.2` and
 * `kubectl_rollout` meaning on both backends what they mean on SQLite.
 */
export function wordTokensAt(text: string): WordToken[] {
  const out: WordToken[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const folded = fold(m[0]);
    if (folded.length > 0) out.push({ text: folded, start: m.index, end: m.index + m[0].length });
  }
  return out;
}

/** The folded words of `text` (see {@link wordTokensAt}). */
export function wordTokens(text: string): string[] {
  return wordTokensAt(text).map((t) => t.text);
}

/** Number of trigrams of a message (code points - 2 per column), FTS5 trigram's document size. */
export function searchTrigramCount(
  content: string | null,
  toolCalls: string | null,
  toolName: string | null,
): number {
  let n = 0;
  for (const text of [content, toolCalls, toolName]) if (text) n += Math.max([...text].length - 2, 0);
  return n;
}

/** Number of words of a message (its content, tool calls and tool name), FTS5's document size. */
export function searchTokenCount(
  content: string | null,
  toolCalls: string | null,
  toolName: string | null,
): number {
  let n = 0;
  for (const text of [content, toolCalls, toolName]) if (text) n += wordTokensAt(text).length;
  return n;
}

/**
 * A `tsvector` literal for a message: its content, tool calls and tool name (the columns FTS5
 * indexes), each word with its position. Tokens hold only letters and digits, so no quoting
 * issue can arise.
 */
export function searchVectorLiteral(
  content: string | null,
  toolCalls: string | null,
  toolName: string | null,
): string {
  const parts: string[] = [];
  let position = 0;
  let size = 0;
  for (const text of [content, toolCalls, toolName]) {
    if (text === null || text === "") continue;
    for (const token of wordTokens(text)) {
      if (Buffer.byteLength(token) > MAX_LEXEME_BYTES) continue;
      position = Math.min(position + 1, MAX_POSITION);
      const entry = `'${token}':${position}`;
      size += entry.length + 1;
      if (size > MAX_VECTOR_CHARS) return parts.join(" ");
      parts.push(entry);
    }
    // Phrases never span two columns (as in FTS5).
    position = Math.min(position + 1, MAX_POSITION);
  }
  // Short-CJK grams, without positions: one- and two-character CJK terms are substrings the
  // word index cannot find and pg_trgm cannot index (it needs three characters).
  const grams = new Set<string>();
  for (const text of [content, toolCalls, toolName]) if (text) for (const g of cjkGrams(text)) grams.add(g);
  for (const g of grams) {
    const entry = quoteLexeme(g);
    size += entry.length + 1;
    if (size > MAX_VECTOR_CHARS) break;
    parts.push(entry);
  }
  return parts.join(" ");
}

/** Marks gram lexemes apart from words (words hold only letters and digits). */
const GRAM_MARK = "~";

/** A lexeme quoted for a `tsvector` or `tsquery` literal. */
export function quoteLexeme(text: string): string {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;
}

/** The gram lexemes of a text: every CJK character, and every pair of characters holding one. */
export function cjkGrams(text: string): string[] {
  const chars = [...text.toLowerCase()];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i++) {
    const here = isCjkCodePoint(chars[i]!.codePointAt(0) ?? 0);
    if (here) out.push(GRAM_MARK + chars[i]);
    const next = chars[i + 1];
    if (next !== undefined && (here || isCjkCodePoint(next.codePointAt(0) ?? 0)))
      out.push(GRAM_MARK + chars[i] + next);
  }
  return out;
}

/** The gram `tsquery` of a one- or two-character term holding CJK, or `null` for other terms. */
export function shortCjkQuery(term: string): string | null {
  const chars = [...term.toLowerCase()];
  if (chars.length > 2 || !containsCjk(term)) return null;
  return quoteLexeme(GRAM_MARK + chars.join(""));
}

/**
 * A `tsquery` literal for a parsed query tree (`@hermes/search` `parseFtsQuery`): each term a
 * phrase of its words (`<->`), `*` a prefix on its last word, AND/OR/NOT as `&`, `|`, `& !`.
 * Returns `null` when no term holds a word.
 */
export function tsqueryLiteral(node: QueryNode): string | null {
  switch (node.kind) {
    case "term": {
      const words = wordTokens(node.text);
      if (words.length === 0) return null;
      const rendered = words.map((w, i) => `'${w}'${node.prefix && i === words.length - 1 ? ":*" : ""}`);
      return rendered.length === 1 ? rendered[0]! : `(${rendered.join(" <-> ")})`;
    }
    case "and":
    case "or": {
      const parts = node.children.map(tsqueryLiteral).filter((p): p is string => p !== null);
      if (parts.length === 0) return null;
      return `(${parts.join(node.kind === "and" ? " & " : " | ")})`;
    }
    case "not": {
      const positive = tsqueryLiteral(node.positive);
      if (positive === null) return null;
      const negative = node.negative.map(tsqueryLiteral).filter((p): p is string => p !== null);
      return negative.length === 0 ? positive : `(${positive} & !(${negative.join(" | ")}))`;
    }
  }
}

/** The searched text of a message, as the trigram index and substring search see it. */
export const SEARCH_DOCUMENT_SQL =
  "(COALESCE(m.content, '') || ' ' || COALESCE(m.tool_calls, '') || ' ' || COALESCE(m.tool_name, ''))";

/**
 * A SQL condition for a CJK-mode query tree: every term a case-insensitive substring of the
 * message (served by the pg_trgm GIN index), a one- or two-character CJK term a gram of the
 * search vector, combined with AND/OR/NOT.
 */
export function substringCondition(node: QueryNode): RawBuilder<boolean> {
  switch (node.kind) {
    case "term": {
      const gram = shortCjkQuery(node.text);
      if (gram !== null) return sql<boolean>`m.search_vector @@ ${gram}::tsquery`;
      const pattern = `%${node.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      return sql<boolean>`${sql.raw(SEARCH_DOCUMENT_SQL)} ILIKE ${pattern}`;
    }
    case "and":
    case "or":
      return sql<boolean>`(${sql.join(
        node.children.map((c) => substringCondition(c)),
        sql.raw(node.kind === "and" ? " AND " : " OR "),
      )})`;
    case "not":
      return sql<boolean>`(${substringCondition(node.positive)} AND NOT (${sql.join(
        node.negative.map((c) => substringCondition(c)),
        sql.raw(" OR "),
      )}))`;
  }
}
