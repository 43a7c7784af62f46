import { compileFtsQuery, FTS_TABLE, referenceSanitizeFts5Query, sanitizeFts5Query } from "@hermes/search";
import { afterAll, describe, expect, it } from "vitest";
import { searchDb } from "./helpers/search-db.js";

const CORPUS = [
  "hello world", // 1
  "it's a C# question about user@example.com", // 2
  "open file.ts:42 and see https://example.com/docs?page=2", // 3
  "run chat-send then P2.2 in my-app.config.ts", // 4
  "docker deploy to k8s cluster", // 5
  "deployment notes for kubernetes", // 6
  "x and y or z not w", // 7
  "NEAR the content of tool_name", // 8
  "café naïve résumé 😀", // 9
  "foo bar baz", // 10
];
const db = searchDb(CORPUS.map((content) => ({ content })));
afterAll(() => db.close());
const find = (match: string) =>
  (
    db
      .prepare(`SELECT rowid FROM ${FTS_TABLE} WHERE ${FTS_TABLE} MATCH ? ORDER BY rowid`)
      .all(match) as Array<{ rowid: number }>
  ).map((r) => r.rowid);

describe("compileFtsQuery: punctuation in and around words still finds the word", () => {
  it.each([
    ["hello!", [1]],
    ["¡hello!", [1]],
    ["C#", [2]],
    ["it's", [2]],
    ["user@example.com", [2]],
    ["file.ts:42", [3]],
    ["https://example.com/docs?page=2", [3]],
    ["(docker)", [5]],
    ["docker,", [5]],
    ["deploy*", [5, 6]],
    ['"docker deploy"', [5]],
    ["chat-send", [4]],
    ["P2.2", [4]],
    ["my-app.config.ts", [4]],
    ["café", [9]],
    ["😀 café", [9]],
  ])("%j finds %j", (query, ids) => {
    expect(find(compileFtsQuery(query))).toEqual(ids);
  });
});

describe("compileFtsQuery: operators repaired, syntax neutralised", () => {
  it.each([
    ["a AND OR b", '"a" OR "b"'],
    ["docker AND NOT kubernetes", '"docker" NOT "kubernetes"'],
    ["docker OR", '"docker"'],
    ["AND AND docker", '"docker"'],
    ["NOT NOT docker", '"docker"'],
    ["NOT docker deploy*", '"deploy"* NOT "docker"'],
    ["NOT docker AND deploy*", '"deploy"* NOT "docker"'],
    ["NOT docker k8s cluster", '("k8s" "cluster") NOT "docker"'],
    ["hello OR NOT docker deploy*", '"hello" OR ("deploy"* NOT "docker")'],
    ["NOT docker", ""],
    ["NOT docker OR hello", ""],
    ["hello OR NOT docker", ""],
    ["NOT docker NOT deploy", ""],
    ["docker OR OR OR deploy", '"docker" OR "deploy"'],
    ["hello NOT", '"hello"'],
    ["a NOT b NOT c", '"a" NOT ("b" OR "c")'],
    ["content:hello", '"hello"'],
    ["tool_name : hello", '"hello"'],
    ["-content:hello", '"hello"'],
    ['content:"hello world"', '"hello world"'],
    ["unknown:hello", '"unknown:hello"'],
    ["NEAR(hello world, 5)", '"NEAR" "hello" "world," "5"'],
    ["^hello", '"hello"'],
    ["hello^world", '"hello" "world"'],
    ["***", ""],
    ["* docker", '"docker"'],
    ["!!! ??? ...", ""],
    ['""', ""],
    ['"unbalanced', '"unbalanced"'],
    ["hello\u0000world", '"hello" "world"'],
    ['"hello\u0000world"', '"hello world"'],
    ["deploy*", '"deploy"*'],
    ['"exact phrase"*', '"exact phrase"*'],
    ["foo*bar", '"foo"* "bar"'],
    ['say "a""b"', '"say" "a" "b"'],
    ["(a OR b) c", '"a" OR ("b" "c")'],
    ["a OR b AND c", '"a" OR ("b" "c")'],
  ])("%j → %j", (query, expected) => {
    expect(compileFtsQuery(query)).toBe(expected);
    if (expected !== "") expect(() => find(expected)).not.toThrow();
  });

  it("a query the reference passes through valid stays the same query", () => {
    for (const q of [
      "hello world",
      "docker OR deploy*",
      '"docker deploy" NOT kubernetes',
      "fix chat-send bug",
    ]) {
      const ref = referenceSanitizeFts5Query(q);
      expect(find(compileFtsQuery(q))).toEqual(find(ref));
    }
  });

  it("a thousand ORs, and three hundred NOTs (deeper than FTS5's limit of 256 when nested), compile to valid queries", () => {
    const ors = Array.from({ length: 1000 }, (_, i) => `w${i}`).join(" OR ");
    expect(() => find(compileFtsQuery(`${ors} OR hello`))).not.toThrow();
    expect(find(compileFtsQuery(`${ors} OR hello`))).toEqual([1]);
    const nots = `hello ${Array.from({ length: 300 }, (_, i) => `NOT w${i}`).join(" ")}`;
    expect(() => find(referenceSanitizeFts5Query(nots))).toThrow(/too large/);
    expect(find(sanitizeFts5Query(nots))).toEqual([1]);
    expect(find(compileFtsQuery(nots))).toEqual([1]);
    const parens = `${"(".repeat(300)}hello${")".repeat(300)}`;
    expect(find(compileFtsQuery(parens))).toEqual([1]);
  });
});
