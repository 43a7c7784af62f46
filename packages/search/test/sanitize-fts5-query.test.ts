import { FTS_TABLE, referenceSanitizeFts5Query, sanitizeFts5Query, TRIGRAM_TABLE } from "@hermes/search";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { searchDb } from "./helpers/search-db.js";

const CORPUS = [
  "hello world", // 1
  "open file.ts:42 and foo:bar", // 2
  "-foo and e.g. this", // 3
  "docker deploy to k8s", // 4
  "deployment notes", // 5
  "a b c", // 6
  "记忆断裂 docker", // 7
];
const db = searchDb(CORPUS.map((content) => ({ content })));
afterAll(() => db.close());
const statements = new Map<string, ReturnType<typeof db.prepare>>();
const find = (match: string, table: string = FTS_TABLE) => {
  const sql = `SELECT rowid FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid`;
  let stmt = statements.get(sql);
  if (stmt === undefined) {
    stmt = db.prepare(sql);
    statements.set(sql, stmt);
  }
  return (stmt.all(match) as Array<{ rowid: number }>).map((r) => r.rowid);
};

describe("sanitizeFts5Query returns what FTS5 MATCH accepts", () => {
  it.each([
    ["a AND OR b", "a OR b", [6]],
    ["foo:bar", '"foo:bar"', [2]],
    ["-foo", '"-foo"', [2, 3]],
    ["e.g.", '"e.g."', [3]],
    ["file.ts:42", '"file.ts:42"', [2]],
    ["hello world", "hello world", [1]],
    ["fix chat-send bug", 'fix "chat-send" bug', []],
    ["deploy*", "deploy*", [4, 5]],
    ['"docker deploy" k8s', '"docker deploy" k8s', [4]],
    ["NOT docker deploy*", "deploy* NOT docker", [5]],
    ["NEAR(a b)", '"NEAR" a b', []],
  ])("%j → %j, which finds %j", (input, expected, rows) => {
    expect(sanitizeFts5Query(input)).toBe(expected);
    expect(find(expected)).toEqual(rows);
  });

  it("the issue's inputs are FTS5 syntax errors as the reference sanitizes them", () => {
    for (const q of ["a AND OR b", "foo:bar", "-foo", "e.g.", "file.ts:42"]) {
      expect(() => find(referenceSanitizeFts5Query(q)), q).toThrow(/fts5|syntax|no such column/i);
      expect(() => find(sanitizeFts5Query(q)), q).not.toThrow();
    }
  });

  it("nothing to search for gives an empty string: no words left, or only an exclusion", () => {
    for (const q of ["", "   ", "***", "AND", "NOT", '""', "()", "!!!", "NOT docker", "x OR NOT docker"]) {
      expect(sanitizeFts5Query(q), q).toBe("");
    }
  });

  it("where the reference's query is valid, the same rows", () => {
    for (const q of [
      "hello world",
      "deploy* OR k8s",
      '"docker deploy" NOT notes',
      "a.b-c OR c",
      "C++ hello",
    ]) {
      expect(find(sanitizeFts5Query(q)), q).toEqual(find(referenceSanitizeFts5Query(q)));
    }
  });

  // Hostile input of every kind, fed to MATCH on real FTS5 tables (unicode61 and trigram).
  it("20,000 generated strings: MATCH never throws on what it returns", () => {
    const piece = fc.oneof(
      fc.constantFrom(
        "AND",
        "OR",
        "NOT",
        "NEAR",
        "NEAR(",
        "and",
        ":",
        "-",
        "*",
        "^",
        '"',
        "(",
        ")",
        "{",
        "}",
      ),
      fc.constantFrom("+", ".", ",", "@", "#", "'", "\\", "%", "_", "\u0000", "\u001a", "😀", "记忆", "e.g."),
      fc.constantFrom(
        "hello",
        "docker",
        "deploy",
        "file.ts:42",
        "foo:bar",
        "content:",
        "tool_name",
        "a",
        "b",
      ),
      fc.string({ unit: "binary", maxLength: 8 }),
      fc.string({ unit: "grapheme-ascii", maxLength: 8 }),
    );
    const query = fc
      .array(fc.tuple(piece, fc.constantFrom(" ", "", "  ")), { maxLength: 12 })
      .map((parts) => parts.map(([p, g]) => p + g).join(""));
    fc.assert(
      fc.property(query, (q) => {
        const match = sanitizeFts5Query(q);
        if (match === "") return;
        find(match);
        find(match, TRIGRAM_TABLE);
      }),
      { numRuns: 20_000, seed: 24 },
    );
  });
});
