import { containsCjk, isCjkCodePoint, positiveTerms, type QueryNode } from "@hermes/search";
import { type RawBuilder, sql } from "kysely";
import { GRAMS_PRESENT } from "../pg-schema.js";
import { searchDocumentSql } from "./search-document.js";
import { eachWord, wordTokens } from "./word-tokens.js";

/** tsvector positions stop at 16383 (PostgreSQL's limit); later words share the last position. */
const MAX_POSITION = 16_383;
/** Longest lexeme PostgreSQL accepts, in bytes. */
const MAX_LEXEME_BYTES = 2_046;
/** Keeps a tsvector well under PostgreSQL's 1 MB limit; words past it are not indexed. */
const MAX_VECTOR_CHARS = 900_000;

/** The search columns of a message: its word vector and its CJK gram vector (`tsvector` literals). */
export interface SearchColumns {
  /** Words with positions (ranked word search). */
  readonly vector: string;
  /** CJK grams without positions (substring search); empty (never NULL, so `NOT` holds) without CJK. */
  readonly grams: string;
}

/**
 * The search columns of a message, each text tokenized once: the words of its content, tool
 * calls and tool name (the columns FTS5 indexes) with positions, and the CJK grams of the same
 * texts. Tokens hold only letters and digits, so no quoting issue can arise.
 */
export function searchColumns(
  content: string | null,
  toolCalls: string | null,
  toolName: string | null,
): SearchColumns {
  const parts: string[] = [];
  let position = 0;
  let size = 0;
  let full = false;
  for (const text of [content, toolCalls, toolName]) {
    if (full) break;
    if (text === null || text === "") continue;
    eachWord(text, (token) => {
      // A UTF-16 unit is at most 3 bytes of UTF-8: only long words need counting.
      if (token.length * 3 > MAX_LEXEME_BYTES && Buffer.byteLength(token) > MAX_LEXEME_BYTES) return true;
      position = Math.min(position + 1, MAX_POSITION);
      const entry = `'${token}':${position}`;
      size += entry.length + 1;
      if (size > MAX_VECTOR_CHARS) {
        full = true;
        return false;
      }
      parts.push(entry);
      return true;
    });
    // Phrases never span two columns (as in FTS5).
    position = Math.min(position + 1, MAX_POSITION);
  }
  // Short-CJK grams, without positions: one- and two-character CJK terms are substrings the
  // word index cannot find and pg_trgm cannot index (it needs three characters).
  const grams = new Set<string>();
  for (const text of [content, toolCalls, toolName])
    if (text && containsCjk(text)) for (const g of cjkGrams(text)) grams.add(g);
  const gramParts: string[] = [];
  let gramSize = 0;
  for (const g of grams) {
    const entry = quoteLexeme(g);
    gramSize += entry.length + 1;
    if (gramSize > MAX_VECTOR_CHARS) break;
    gramParts.push(entry);
  }
  return { vector: parts.join(" "), grams: gramParts.join(" ") };
}

/** The word vector of a message (see {@link searchColumns}). */
export function searchVectorLiteral(
  content: string | null,
  toolCalls: string | null,
  toolName: string | null,
): string {
  return searchColumns(content, toolCalls, toolName).vector;
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

/** The gram lexeme of a one- or two-character term holding CJK, or `null` for other terms. */
function shortCjkGram(term: string): string | null {
  const chars = [...term.toLowerCase()];
  if (chars.length > 2 || !containsCjk(term)) return null;
  return GRAM_MARK + chars.join("");
}

/** Whether `term` is three or more characters, all CJK (found by its gram pairs, then checked). */
export function longCjkTerm(term: string): boolean {
  return [...term].length >= 3 && allCjk(term);
}

/**
 * Whether a CJK-mode query is found through pg_trgm's index: some positive term is matched by
 * `ILIKE` alone (not one found by its grams), and each such term has three or more characters
 * (a shorter one yields no trigram: the query reads every row whatever the index).
 */
export function needsTrigrams(tree: QueryNode): boolean {
  const plain = positiveTerms(tree).filter((t) => shortCjkQuery(t.text) === null && !longCjkTerm(t.text));
  return plain.length > 0 && plain.every((t) => [...t.text].length >= 3);
}

/** The gram `tsquery` of a one- or two-character term holding CJK, or `null` for other terms. */
export function shortCjkQuery(term: string): string | null {
  const gram = shortCjkGram(term);
  return gram === null ? null : quoteLexeme(gram);
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
export const SEARCH_DOCUMENT_SQL = searchDocumentSql("m");

/** Whether every character of `term` is CJK (its grams then find exactly its occurrences). */
function allCjk(term: string): boolean {
  for (const c of term) if (!isCjkCodePoint(c.codePointAt(0) ?? 0)) return false;
  return true;
}

/**
 * The gram `tsquery` of a subtree whose terms are all one or two characters holding CJK (each
 * one gram lexeme: exact), or `null` when some term is not.
 */
export function gramQuery(node: QueryNode): string | null {
  switch (node.kind) {
    case "term":
      return shortCjkQuery(node.text);
    case "and":
    case "or": {
      const parts = node.children.map(gramQuery);
      if (parts.some((p) => p === null)) return null;
      return `(${parts.join(node.kind === "and" ? " & " : " | ")})`;
    }
    case "not": {
      const positive = gramQuery(node.positive);
      const negative = node.negative.map(gramQuery);
      if (positive === null || negative.some((p) => p === null)) return null;
      return `(${positive} & !(${negative.join(" | ")}))`;
    }
  }
}

/**
 * The condition of a gram query (see {@link gramQuery}): stating the gram index's predicate.
 * `grams` is a parameter, or a literal (`sql.raw` of `dollarQuoted`) for a statement
 * without parameters.
 */
export function gramMatch(grams: string | RawBuilder<string>): RawBuilder<boolean> {
  return sql<boolean>`(m.${sql.raw(GRAMS_PRESENT)} AND m.search_grams @@ ${grams}::tsquery)`;
}

/**
 * A SQL condition for a CJK-mode query tree: every term a case-insensitive substring of the
 * message. Subtrees of one- and two-character CJK terms are one `tsquery` on the gram column
 * (exact; stating the gram index's predicate); a longer all-CJK term needs every gram pair of it (the gram index finds the
 * candidates) and is then checked as a substring; other terms use pg_trgm's `ILIKE` index.
 */
export function substringCondition(node: QueryNode): RawBuilder<boolean> {
  const grams = gramQuery(node);
  if (grams !== null) return gramMatch(grams);
  switch (node.kind) {
    case "term": {
      const pattern = `%${node.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const ilike = sql<boolean>`${sql.raw(SEARCH_DOCUMENT_SQL)} ILIKE ${pattern}`;
      const chars = [...node.text.toLowerCase()];
      if (chars.length < 3 || !allCjk(node.text)) return ilike;
      const pairs = [...new Set(chars.slice(1).map((c, i) => quoteLexeme(GRAM_MARK + chars[i] + c)))];
      return sql<boolean>`(m.${sql.raw(GRAMS_PRESENT)} AND m.search_grams @@ ${pairs.join(" & ")}::tsquery AND ${ilike})`;
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
