import type { PostgresSessionStore, SealStep } from "@hermes/postgres";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { freshSchema, serverUrl, storesClosedAfterEach } from "./helpers/test-stores.js";
import { clientsEndedAfterEach, expectWholeLayout, pagedIds, trigramIndexes } from "./helpers/word-index.js";

// pg_trgm's index by sealed range (schema v9): the open range has none (an append inserts no
// trigrams), so a substring query reads each sealed range through its own trigram index and
// the open range off the primary key. The server of these tests has RUM (the split layout).
const url = serverUrl();
const open = storesClosedAfterEach(url);
const client = clientsEndedAfterEach(url);

/** Messages of session `a`: `docker` in every third (inside a longer word in every sixth), `龙` in every fifth. */
async function appendMixed(store: PostgresSessionStore, n: number, tag: string): Promise<number[]> {
  return store.appendMessages(
    Array.from({ length: n }, (_, i) => ({
      sessionId: "a",
      role: "user",
      content: [
        `note ${tag}${i}`,
        i % 6 === 0 ? "mydockerfile" : i % 3 === 0 ? "docker ps" : "",
        i % 5 === 0 ? "龙年" : "",
      ].join(" "),
    })),
  );
}

/**
 * Ids of the messages holding every one of `all` or any of `any` (case-insensitive substrings
 * of content, tool calls and tool name), newest first, ties by id: a sequential scan.
 */
async function substringScan(c: pg.Client, o: { any?: string[]; all?: string[] }): Promise<number[]> {
  const doc = "(COALESCE(content, '') || ' ' || COALESCE(tool_calls, '') || ' ' || COALESCE(tool_name, ''))";
  const like = (t: string) => `${doc} ILIKE '%${t}%'`;
  const where = o.any !== undefined ? o.any.map(like).join(" OR ") : (o.all ?? []).map(like).join(" AND ");
  await c.query("BEGIN");
  try {
    await c.query("SET LOCAL enable_indexscan = off");
    await c.query("SET LOCAL enable_bitmapscan = off");
    const { rows } = await c.query<{ id: number }>(
      `SELECT id::float8 AS id FROM messages WHERE ${where} ORDER BY timestamp DESC, id`,
    );
    return rows.map((r) => r.id);
  } finally {
    await c.query("COMMIT");
  }
}

/** Substring queries and what each must find. */
const QUERIES: Array<[string, { any?: string[]; all?: string[] }]> = [
  ["docker OR 龙", { any: ["docker", "龙"] }],
  ["ockerfi OR 龙年", { any: ["ockerfi", "龙年"] }],
  ["docker 龙", { all: ["docker", "龙"] }],
];

async function expectSubstringPages(store: PostgresSessionStore, c: pg.Client): Promise<void> {
  for (const [query, terms] of QUERIES) {
    const expected = await substringScan(c, terms);
    expect(expected.length).toBeGreaterThan(0);
    expect({ query, ids: await pagedIds(store, query, 7) }).toEqual({ query, ids: expected });
  }
}

/** A store on a fresh schema with one session `a`, seals only when asked, old indexes dropped at once. */
async function storeWithSession() {
  const schema = freshSchema();
  const store = await open({ schema, wordIndex: { sealEvery: 1_000_000, dropDelayMs: 0 } });
  await store.createSession({ id: "a", source: "cli" });
  return { schema, store, c: await client(schema) };
}

describe("pg_trgm by sealed range", () => {
  it("a new store has no trigram index; each seal builds its range's, a merge drops those it folds", async () => {
    const { store, c } = await storeWithSession();
    expect(await trigramIndexes(c)).toEqual({});
    const shapes: string[][] = [];
    for (const n of [40, 10, 10, 20]) {
      await appendMixed(store, n, `r${n}_`);
      await expectSubstringPages(store, c);
      await store.sealSearchIndex();
      await expectWholeLayout(c);
      shapes.push(Object.keys(await trigramIndexes(c)));
      await expectSubstringPages(store, c);
    }
    expect(shapes).toEqual([
      ["idx_messages_words_0_40_trgm"],
      ["idx_messages_words_0_40_trgm", "idx_messages_words_40_50_trgm"],
      ["idx_messages_words_0_40_trgm", "idx_messages_words_40_60_trgm"],
      ["idx_messages_words_0_80_trgm"],
    ]);
    await appendMixed(store, 13, "open");
    await expectSubstringPages(store, c);
  });

  it("a row appended during each step of a seal is found once by a substring query, during the seal and after", async () => {
    const { store, c } = await storeWithSession();
    await appendMixed(store, 30, "b");
    const steps: SealStep[] = [];
    await store.sealSearchIndex({
      onStep: async (step) => {
        steps.push(step);
        await store.appendMessage({ sessionId: "a", role: "user", content: `docker during ${step}` });
        await expectSubstringPages(store, c);
      },
    });
    expect(steps).toEqual(["chosen", "sealed-built", "open-built", "switched", "dropped"]);
    await expectWholeLayout(c);
    await expectSubstringPages(store, c);
  });

  it("a page that the newest messages do not fill is read range by range, and equals a scan", async () => {
    const { store, c } = await storeWithSession();
    // 6,000 messages; `zephyrine` only in the oldest 2,000 (every 200th), beyond the window of
    // newest messages a page of 20 is first sought in (4,000).
    const texts = Array.from(
      { length: 6_000 },
      (_, i) => `line ${i}${i < 2_000 && i % 200 === 0 ? " zephyrine" : ""}${i % 3 === 0 ? " often" : ""}`,
    );
    for (let i = 0; i < texts.length; i += 1_000) {
      await store.appendMessages(
        texts.slice(i, i + 1_000).map((content) => ({ sessionId: "a", role: "user", content })),
      );
      if (i === 3_000) await store.sealSearchIndex();
    }
    await c.query("ANALYZE messages");
    const expected = await substringScan(c, { any: ["zephyrine", "壮"] });
    expect(expected).toHaveLength(10);
    expect(await pagedIds(store, "zephyrine OR 壮", 20)).toEqual(expected);
    expect(await pagedIds(store, "zephyrine OR 壮", 4)).toEqual(expected);
    // A common term fills its page among the newest; later pages go past them.
    const lines = await substringScan(c, { any: ["often", "壮"] });
    expect((await store.searchMessages("often OR 壮", { limit: 20 })).map((h) => h.id)).toEqual(
      lines.slice(0, 20),
    );
    expect((await store.searchMessages("often OR 壮", { limit: 20, offset: 900 })).map((h) => h.id)).toEqual(
      lines.slice(900, 920),
    );
  });

  it("verifySearchIndex names a sealed range without its trigram index; rebuildSearchIndex makes it again", async () => {
    const { store, c } = await storeWithSession();
    await appendMixed(store, 20, "x");
    await store.sealSearchIndex();
    await appendMixed(store, 10, "y");
    await store.sealSearchIndex();
    await c.query("DROP INDEX idx_messages_words_20_30_trgm");
    const report = await store.verifySearchIndex();
    expect(report.ok).toBe(false);
    expect(report.indexes.find((i) => i.kind === "trigram")).toEqual({
      name: "idx_messages_words_trgm",
      kind: "trigram",
      status: "missing",
      detail: "sealed ranges without their trigram index: idx_messages_words_20_30_trgm (does not exist)",
    });
    // Searches still find every match (that range read without its index).
    await expectSubstringPages(store, c);
    await store.rebuildSearchIndex();
    await expectWholeLayout(c);
    const again = await store.verifySearchIndex();
    expect(again.ok).toBe(true);
    expect(again.indexes.find((i) => i.kind === "trigram")?.status).toBe("ok");
  });
});

describe("schema v9: a v8 store upgrades", () => {
  it("the whole table's trigram index gives way to one per sealed range; substring queries find what they found", async () => {
    const { schema, store, c } = await storeWithSession();
    await appendMixed(store, 40, "p");
    await store.sealSearchIndex();
    await appendMixed(store, 10, "q");
    await store.sealSearchIndex();
    await appendMixed(store, 9, "r");
    await store.close();
    // As v8 left it: pg_trgm's index of every row, none by range.
    for (const name of Object.keys(await trigramIndexes(c))) await c.query(`DROP INDEX ${name}`);
    await c.query(`CREATE INDEX idx_messages_search_trgm ON messages USING gin (
      (COALESCE(content, '') || ' ' || COALESCE(tool_calls, '') || ' ' || COALESCE(tool_name, '')) public.gin_trgm_ops)`);
    await c.query("UPDATE schema_version SET version = 8");
    const upgraded = await open({ schema });
    expect(upgraded.migration).toMatchObject({ fromVersion: 8, toVersion: 10 });
    expect(upgraded.migration.applied).toEqual([
      expect.stringMatching(/^v9: /),
      expect.stringMatching(/^v10: /),
    ]);
    expect((await expectWholeLayout(c)).map((r) => [r.lo, r.hi])).toEqual([
      [0, 40],
      [40, 50],
      [50, null],
    ]);
    await expectSubstringPages(upgraded, c);
    expect((await upgraded.verifySearchIndex()).ok).toBe(true);
  });
});
