import { ftsMatchBound } from "@hermes/search";
import { afterAll, describe, expect, it } from "vitest";
import { recordingExecutor, searchDb } from "./helpers/search-db.js";

// 300 rows with "common", 3 with "rare", 1 with "deploy", 2 with a phrase: the bound sums
// the rows of each word (capped), so rare words stay below the cap and any common one passes it.
const CORPUS = [
  ...Array.from({ length: 300 }, (_, i) => ({ content: `common word ${i}` })),
  { content: "a rare find" },
  { content: "rare again, connection refused" },
  { content: "rare deployment notes" },
  { content: "deploy it; connection refused" },
];
const db = searchDb(CORPUS);
const exec = recordingExecutor(db);
afterAll(() => db.close());
const CAP = 100;

describe("ftsMatchBound: a capped count of the rows each word of a ranked query reads", () => {
  it.each([
    ["rare", 3],
    ['"connection refused"', 4], // each word's rows: 2 + 2
    ["rare OR deploy", 4],
    ["rare NOT deploy", 4], // the negated word is read too
    ["nothinglikethis", 0],
  ])("%s → %i", (query, bound) => {
    expect(ftsMatchBound(exec, query, CAP)).toBe(bound);
  });

  it("stops past the cap: one common word makes the query dear, whatever the others", () => {
    expect(ftsMatchBound(exec, "common", CAP)).toBe(CAP + 1);
    expect(ftsMatchBound(exec, "rare common", CAP)).toBe(CAP + 1);
    expect(ftsMatchBound(exec, "rare", 2)).toBe(3);
    // A prefix is never counted (FTS5 merges all it stands for first): dear at once.
    expect(ftsMatchBound(exec, "rar*", CAP)).toBe(CAP + 1);
  });

  it("bounds nothing it cannot: CJK terms, the trigram table, an empty query", () => {
    expect(ftsMatchBound(exec, "数据库", CAP)).toBeNull();
    expect(ftsMatchBound(exec, "桂林 rare", CAP)).toBeNull();
    expect(ftsMatchBound(exec, "   ", CAP)).toBeNull();
    expect(exec.errors).toEqual([]);
  });
});
