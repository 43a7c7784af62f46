import { containsCjk, planSearch, runSearch, type SearchPlan } from "@hermes/search";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { backfillCjkChunk, createCjkIndex, drainCjkQueue } from "../dist/cjk-index/cjk-index.js";
import { referenceIsReliable, referenceSearch } from "./helpers/reference-search.js";
import { type CorpusMessage, recordingExecutor, searchDb } from "./helpers/search-db.js";

// A small corpus that most generated terms hit, so the differential check has rows to compare.
const CORPUS: CorpusMessage[] = [
  { content: "hello world" },
  { content: "Hello again, world: it's C# and user@example.com" },
  { content: "open file.ts:42 then https://example.com/docs?page=2" },
  { content: "run chat-send then P2.2 in my-app.config.ts", source: "telegram" },
  { content: "docker deploy to k8s", role: "assistant" },
  { content: "deployment of docker images", source: "discord" },
  { content: "and or not near NEAR content tool_name" },
  { content: "café naïve 😀 emoji", role: "tool", tool_name: "terminal" },
  {
    content: null,
    tool_calls: '[{"function":{"name":"search_files","arguments":"{\\"q\\": \\"docker\\"}"}}]',
  },
  { content: "昨天和其他Agent的聊天记录，记忆断裂问题复现了" },
  { content: "我来看看记忆系统的日志。桂林和广西的测试数据也在里面。", source: "telegram" },
  { content: "Agent通信协议 100%完成 docker", role: "assistant" },
  { content: "こんにちは世界、カタカナのテストです" },
  { content: "안녕하세요 반갑습니다", source: "discord" },
  { content: "AI 记忆 and OpenAI 记忆断裂" },
  { content: "广西 Guangxi 桂林 Guilin" },
  { content: "snake_case_name and under_score 100% done" },
  { content: "a b c d e f g h i j" },
];

const VOCAB = [
  "hello",
  "world",
  "Hello",
  "docker",
  "deploy",
  "deployment",
  "k8s",
  "chat-send",
  "P2.2",
  "my-app.config.ts",
  "file.ts",
  "42",
  "example.com",
  "user",
  "café",
  "naive",
  "naïve",
  "emoji",
  "and",
  "or",
  "not",
  "near",
  "content",
  "tool_name",
  "tool_calls",
  "search_files",
  "terminal",
  "snake_case_name",
  "a",
  "b",
  "c",
  "x",
  "记忆",
  "记忆断裂",
  "断裂",
  "广西",
  "桂林",
  "测试",
  "测",
  "Agent通信",
  "通信",
  "100%完成",
  "完成",
  "日志",
  "こんにちは",
  "テスト",
  "カタカナ",
  "안녕",
  "안녕하세요",
  "AI",
  "OpenAI",
  "Guilin",
  "的",
  "。",
];
const OPERATORS = ["AND", "OR", "NOT", "and", "or", "not", "AND OR", "OR NOT", "NOT NOT"];
const SYNTAX = [
  '"',
  '"',
  "(",
  ")",
  "*",
  "**",
  "^",
  "+",
  "{",
  "}",
  ":",
  "-",
  ".",
  "@",
  "#",
  "'",
  "!",
  ",",
  "?",
  "/",
  "NEAR(",
  "NEAR/2",
  "content:",
  "tool_calls :",
  "-content:",
  "{content tool_name}:",
  "\\",
  "%",
  "_",
  "%_",
];
const ODD = [
  "😀",
  "👍🏽",
  "\u0000",
  "\u0001",
  "\u001a",
  "\u001f",
  "\u007f",
  "\ufeff",
  "\u200b",
  "\u3000",
  "\t",
  "\n",
  "\u0301",
  "\u{20000}",
  "\ud7a3",
  "ﾟ",
  "\uff01",
];

const fragment = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...VOCAB) },
  { weight: 3, arbitrary: fc.constantFrom(...OPERATORS) },
  { weight: 4, arbitrary: fc.constantFrom(...SYNTAX) },
  { weight: 2, arbitrary: fc.constantFrom(...ODD) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 6 }) },
);
const glue = fc.constantFrom(" ", " ", " ", "", "  ");
/** Fragments glued with or without spaces: words, operators and syntax in any order. */
const query = fc
  .array(fc.tuple(fragment, glue), { maxLength: 14 })
  .map((parts) => parts.map(([f, g]) => f + g).join(""));

const db = searchDb(CORPUS);
const exec = recordingExecutor(db);
db.transaction(() => {
  createCjkIndex(exec);
  while (backfillCjkChunk(exec, 100).remaining > 0);
  while (drainCjkQueue(exec, 100) > 0);
})();
afterAll(() => db.close());

const ALL = { limit: 1000, offset: 0, context: false };
function ours(q: string): { plan: SearchPlan; ids: number[] } {
  const plan = planSearch(q);
  const before = exec.errors.length;
  const ids = runSearch(exec, plan, ALL).map((h) => h.id);
  // runSearch hides an FTS5 syntax error as "no rows" (as the reference does); the executor
  // saw it anyway, so any error at all fails the property.
  if (exec.errors.length > before) throw exec.errors[exec.errors.length - 1];
  return { plan, ids };
}

function check(q: string): void {
  const { ids } = ours(q);
  if (!referenceIsReliable(q)) return;
  const found = new Set(ids);
  const missing = referenceSearch(db, q, ALL)
    .map((h) => h.id)
    .filter((id) => !found.has(id));
  if (missing.length > 0) throw new Error(`reference finds ${missing.join(",")} for ${JSON.stringify(q)}`);
}

describe("search never fails on user input, and finds what the reference finds", () => {
  it("100,000 generated queries: no throw, no SQLite/FTS5 error, reference hits ⊆ ours", () => {
    fc.assert(
      fc.property(query, (q) => check(q)),
      { numRuns: 100_000, seed: 20260105 },
    );
    expect(exec.errors).toEqual([]);
  }, 300_000);

  it("with context and paging: 2,000 generated queries, no error", () => {
    fc.assert(
      fc.property(query, fc.integer({ min: 0, max: 5 }), (q, offset) => {
        const before = exec.errors.length;
        for (const hit of runSearch(exec, planSearch(q), { limit: 3, offset })) {
          expect(
            hit.context.some((c) => c.role === "user" || c.role === "assistant" || c.role === "tool"),
          ).toBe(true);
        }
        expect(exec.errors.length).toBe(before);
      }),
      { numRuns: 2_000, seed: 3 },
    );
  });

  it("10,000-character strings of words and syntax", () => {
    const long = fc.array(fc.tuple(fragment, glue), { minLength: 3_000, maxLength: 3_000 }).map((parts) =>
      parts
        .map(([f, g]) => f + g)
        .join("")
        .slice(0, 10_000)
        .padEnd(10_000, "x"),
    );
    fc.assert(
      fc.property(long, (q) => {
        expect(q.length).toBe(10_000);
        ours(q);
      }),
      { numRuns: 50, seed: 7 },
    );
  });

  it("a query never returns what it excludes: 2,000 generated exclusions, leading, trailing and after AND", () => {
    const word = fc.constantFrom(...VOCAB.filter((w) => planSearch(w).kind !== "empty"));
    const idsOf = (q: string) => new Set(ours(q).ids);
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 3 }),
        word,
        fc.constantFrom("lead", "lead-and", "trail", "and-not"),
        (positive, negated, form) => {
          const p = positive.join(" ");
          const q =
            form === "lead"
              ? `NOT ${negated} ${p}`
              : form === "lead-and"
                ? `NOT ${negated} AND ${p}`
                : form === "trail"
                  ? `${p} NOT ${negated}`
                  : `${p} AND NOT ${negated}`;
          const excluded = idsOf(negated);
          // Words are substrings in a query with CJK text: compare like with like.
          const wanted = containsCjk(q) === containsCjk(p) ? idsOf(p) : null;
          for (const id of ours(q).ids) {
            if (excluded.has(id)) throw new Error(`${JSON.stringify(q)} returns ${id}, which has ${negated}`);
            if (wanted !== null && !wanted.has(id)) {
              throw new Error(`${JSON.stringify(q)} returns ${id}, which lacks ${p}`);
            }
          }
          // Only an exclusion: no index can answer it, and the plan says so (a store refuses it).
          expect(planSearch(`NOT ${negated}`)).toEqual({ kind: "empty", negationOnly: true });
          expect(planSearch(`${p} OR NOT ${negated}`)).toEqual({ kind: "empty", negationOnly: true });
        },
      ),
      { numRuns: 2_000, seed: 2402 },
    );
  });

  it("1,000 ORs (and ANDs, NOTs) between generated terms", () => {
    const chain = fc
      .tuple(
        fc.array(fragment, { minLength: 1001, maxLength: 1001 }),
        fc.constantFrom("OR", "AND", "NOT", "OR NOT"),
      )
      .map(([terms, op]) => terms.join(` ${op} `));
    fc.assert(
      fc.property(chain, (q) => {
        ours(q);
      }),
      { numRuns: 60, seed: 11 },
    );
    const hits = ours(Array.from({ length: 1001 }, (_, i) => (i % 2 ? "docker" : "hello")).join(" OR ")).ids;
    expect(hits.sort((a, b) => a - b)).toEqual([1, 2, 5, 6, 9, 12]);
  });
});
