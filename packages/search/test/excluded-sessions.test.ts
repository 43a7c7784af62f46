import { planSearch, runSearch, type SearchFilters, withoutShortCjkIndex } from "@hermes/search";
import { afterAll, describe, expect, it } from "vitest";
import { type CorpusMessage, catchUp, recordingExecutor, searchDb } from "./helpers/search-db.js";

// `excludedSessions` leaves out the sessions a relation lists, on every path a query can take:
// the same hits as without it, minus those sessions' rows, paged after the filter.

const TEXTS = [
  "deploy the docker image",
  "docker compose logs",
  "桂林山水甲天下",
  "去桂林",
  "docker 在桂林",
  "hello world",
];
const SOURCES = ["cli", "matrix", "telegram", "homeassistant"];
// Every text in every session, interleaved, so each query has hits on both sides of the filter.
const CORPUS: CorpusMessage[] = TEXTS.flatMap((content, i) =>
  SOURCES.map((source, j) => ({ content, source, role: (i + j) % 2 === 0 ? "user" : "assistant" })),
);

const db = searchDb(CORPUS);
db.exec("CREATE TABLE left_out (id TEXT PRIMARY KEY)");
db.exec("INSERT INTO left_out VALUES ('s-matrix'), ('s-homeassistant')");
catchUp(db);
const exec = recordingExecutor(db);
afterAll(() => db.close());

const PLANS: Array<[string, string, boolean]> = [
  ["ranked words", "docker", false],
  ["ranked prefix", "dock*", false],
  ["trigram (3+ CJK characters)", "桂林山水", false],
  ["short CJK through our index", "桂林", false],
  ["short CJK by a scan", "桂林", true],
  ["terms on two indexes", "docker 桂林", false],
];

function ids(q: string, scan: boolean, filters: SearchFilters & { limit: number; offset: number }) {
  const planned = planSearch(q);
  const plan = scan ? withoutShortCjkIndex(planned) : planned;
  return runSearch(exec, plan, { ...filters, context: false }).map((h) => [h.id, h.session_id] as const);
}

describe("SearchFilters.excludedSessions", () => {
  it.each(PLANS)("%s: the hits without those sessions, paged after the filter", (_name, q, scan) => {
    const all = ids(q, scan, { limit: 1000, offset: 0 });
    const kept = all.filter(([, session]) => session !== "s-matrix" && session !== "s-homeassistant");
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(all.length);
    expect(ids(q, scan, { limit: 1000, offset: 0, excludedSessions: "left_out" })).toEqual(kept);
    expect(ids(q, scan, { limit: 2, offset: 1, excludedSessions: "left_out" })).toEqual(kept.slice(1, 3));
    // With the reference's filters too.
    expect(
      ids(q, scan, {
        limit: 1000,
        offset: 0,
        excludedSessions: "left_out",
        sourceFilter: ["telegram", "matrix"],
      }),
    ).toEqual(kept.filter(([, session]) => session === "s-telegram"));
    expect(exec.errors).toEqual([]);
  });

  it("takes a plain SQL name only", () => {
    expect(() =>
      ids("docker", false, { limit: 5, offset: 0, excludedSessions: "left_out; DROP TABLE x" }),
    ).toThrow(TypeError);
  });
});
