import type { PortableSession } from "@hermes/core";
import {
  openPostgresSessionStore,
  PG_MIGRATIONS,
  type PostgresSessionStore,
  type SealStep,
  searchColumns,
} from "@hermes/postgres";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { migrationStatements } from "../dist/migrations/pg-migration.js";
import { ensureExtensions } from "./helpers/extensions.js";
import { freshSchema, serverUrl, storesClosedAfterEach } from "./helpers/test-stores.js";
import {
  clientsEndedAfterEach,
  expectEachOnce,
  expectWholeLayout,
  indexPagesHash,
  matchingIds,
  pagedIds,
  rangeRows,
  wordIndexes,
} from "./helpers/word-index.js";

// The split word index (schema v6): sealed id ranges on RUM indexes that take no inserts, the
// newest messages on a GIN index, seals that move the one into the other while appends and
// searches go on. The server of these tests has RUM (Debian's postgresql-15-rum).
const url = serverUrl();
const open = storesClosedAfterEach(url);
const client = clientsEndedAfterEach(url);

/** A store on a fresh schema with one session `a`, seals only when asked, old indexes dropped at once. */
async function storeWithSession(o: { refreshMs?: number } = {}) {
  const schema = freshSchema();
  const store = await open({
    schema,
    maxConnections: 6,
    wordIndex: { sealEvery: 1_000_000, dropDelayMs: 0, ...o },
  });
  await store.createSession({ id: "a", source: "cli" });
  return { schema, store, c: await client(schema) };
}

/** Appends `n` messages holding `common` (and `docker` in every third), returns their ids. */
async function appendCommon(store: PostgresSessionStore, n: number, tag: string): Promise<number[]> {
  return store.appendMessages(
    Array.from({ length: n }, (_, i) => ({
      sessionId: "a",
      role: "user",
      content: `common ${tag}${i}${i % 3 === 0 ? " docker" : ""}`,
    })),
  );
}

describe("layout", () => {
  it("a new store has one open range on GIN and no RUM index; a seal moves its rows into a sealed RUM range", async () => {
    const { store, c } = await storeWithSession();
    expect(store.searchMethod).toBe("rum");
    expect(await rangeRows(c)).toEqual([
      {
        lo: 0,
        hi: null,
        index: "idx_messages_words_open_0",
        method: "gin",
        valid: true,
        predicate: expect.stringMatching(/^\(\(id \+ \(?'?0'?\)?::bigint\) > \(?'?0'?\)?::bigint\)$/),
      },
    ]);
    const ids = await appendCommon(store, 30, "x");
    expect(await store.sealSearchIndex()).toEqual({ outcome: "sealed", range: { lo: 0, hi: 30 }, merged: 0 });
    const ranges = await expectWholeLayout(c);
    expect(ranges.map((r) => [r.lo, r.hi, r.index])).toEqual([
      [0, 30, "idx_messages_words_0_30"],
      [30, null, "idx_messages_words_open_30"],
    ]);
    // On `id + 0` (see rangePredicate), bounds as bigint constants (however the server prints them).
    expect(ranges[0]!.predicate!.replace(/'|\((\d+)\)/g, "$1")).toBe(
      "(((id + 0::bigint) > 0::bigint) AND ((id + 0::bigint) <= 30::bigint))",
    );
    expectEachOnce(await pagedIds(store, "common", 7), ids);
    // Nothing new in the open range: a forced seal has nothing to move.
    expect(await store.sealSearchIndex()).toEqual({ outcome: "not-needed", merged: 0 });
    expect((await store.verifySearchIndex()).indexes[0]).toMatchObject({
      name: "idx_messages_words",
      status: "ok",
    });
  });

  it("seals merge the newest sealed ranges while they are no larger (ranges double), and searches find every row once", async () => {
    const { store, c } = await storeWithSession();
    const all: number[] = [];
    const shapes: Array<Array<[number, number | null]>> = [];
    for (const n of [40, 10, 10, 20, 5]) {
      all.push(...(await appendCommon(store, n, `r${n}_`)));
      await store.sealSearchIndex();
      shapes.push((await expectWholeLayout(c)).map((r) => [r.lo, r.hi]));
      expectEachOnce(await pagedIds(store, "common", 9), all);
      expectEachOnce(await pagedIds(store, "docker", 4), await matchingIds(c, "docker"));
    }
    expect(shapes).toEqual([
      [
        [0, 40],
        [40, null],
      ],
      [
        [0, 40],
        [40, 50],
        [50, null],
      ],
      [
        [0, 40],
        [40, 60],
        [60, null],
      ], // 10 ≤ 10: merged
      [
        [0, 80],
        [80, null],
      ], // 20 ≤ 20, then 40 ≤ 40
      [
        [0, 80],
        [80, 85],
        [85, null],
      ],
    ]);
  });

  it("the CJK gram index is GIN (it takes inserts, which GIN handles): no RUM index on messages admits a new id", async () => {
    const { store, c } = await storeWithSession();
    await appendCommon(store, 20, "g");
    await store.appendMessage({ sessionId: "a", role: "user", content: "桂林山水 龙年" });
    await store.sealSearchIndex();
    const { rows } = await c.query(
      `SELECT ic.relname AS name, a.amname AS method, pg_get_expr(i.indpred, i.indrelid) AS predicate
       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am a ON a.oid = ic.relam
       WHERE i.indrelid = 'messages'::regclass AND a.amname IN ('rum', 'gin') ORDER BY 1`,
    );
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(byName.idx_messages_search_grams.method).toBe("gin");
    const rum = rows.filter((r) => r.method === "rum");
    expect(rum.map((r) => r.name)).toEqual(["idx_messages_words_0_21"]);
    // Its predicate is closed above, at or below every id the sequence will hand out.
    expect(rum[0].predicate.replace(/'|\((\d+)\)/g, "$1")).toContain("<= 21::bigint");
    const seq = await c.query("SELECT last_value::float8 AS v FROM messages_id_seq");
    expect(seq.rows[0].v).toBeGreaterThanOrEqual(21);
  });
});

describe("sealed ranges take no inserts beside a scan", () => {
  it("appends, ranked searches and imports of new sessions leave a sealed RUM index's pages unchanged", async () => {
    const { schema, store, c } = await storeWithSession();
    // No vacuum of the deleted row's entry while the pages are compared.
    await c.query("ALTER TABLE messages SET (autovacuum_enabled = off)");
    await store.createSession({ id: "old", source: "cli" });
    await store.appendMessage({ sessionId: "old", role: "user", content: "common legacy message" });
    await appendCommon(store, 60, "s");
    await store.sealSearchIndex();
    const [sealed] = await rangeRows(c);
    const before = await indexPagesHash(c, schema, sealed!.index);
    const exported: PortableSession[] = [];
    for await (const session of store.exportStream({ sessionIds: ["old"] })) exported.push(session);
    expect(await store.deleteSession("old")).toBe(true);
    for (let i = 0; i < 5; i++) {
      await appendCommon(store, 40, `n${i}_`);
      await store.searchMessages("common", { limit: 20 });
      await store.searchMessages("docker", { limit: 5, offset: 3 });
    }
    // A new session's messages (ids above every stored one) go to the open range.
    const old = exported[0]!;
    const renamed = old.messages.map((m, i) => ({ ...m, id: 10_000 + i, session_id: "fresh" }));
    await store.importSessions([{ ...old, id: "fresh", messages: renamed }]);
    expect((await store.getMessages("fresh")).map((m) => m.id)).toEqual([10_000]);
    expect(await indexPagesHash(c, schema, sealed!.index)).toBe(before);
    expectEachOnce(await pagedIds(store, "common", 25), await matchingIds(c, "common"));
    // Its message had id 1, free again and inside the sealed range: the import keeps the id
    // (as on SQLite), holding messages exclusively while it writes into the RUM index.
    const blocked: string[] = [];
    const holder = await client(schema);
    await holder.query("BEGIN");
    await holder.query("SELECT count(*) FROM messages");
    const importing = store.importSessions(exported).then(() => blocked.push("imported"));
    await new Promise((r) => setTimeout(r, 300));
    // It waits for a reader that holds messages (its exclusive lock conflicts with any read).
    expect(blocked).toEqual([]);
    await holder.query("COMMIT");
    await importing;
    const [imported] = await store.getMessages("old");
    expect(imported!.id).toBe(1);
    expect(await indexPagesHash(c, schema, sealed!.index)).not.toBe(before);
    expectEachOnce(await pagedIds(store, "common", 25), await matchingIds(c, "common"));
    // Control: a row written into the range by hand does change the index's pages.
    const afterImport = await indexPagesHash(c, schema, sealed!.index);
    await c.query("DELETE FROM messages WHERE id = 2");
    await c.query(
      "INSERT INTO messages (id, session_id, role, content, timestamp, search_vector) VALUES (2, 'a', 'user', 'x', 1, 'common:1')",
    );
    expect(await indexPagesHash(c, schema, sealed!.index)).not.toBe(afterImport);
  });
});

describe("seals while the store works", () => {
  it("a row appended during each step of a seal is found exactly once, during the seal and after", async () => {
    const { schema, store, c } = await storeWithSession();
    // A second store that reads the registry before every search, the first one every second.
    const fresh = await open({ schema, wordIndex: { refreshMs: 0 } });
    const expected = new Set(await appendCommon(store, 50, "b"));
    const markers: Array<[string, number]> = [];
    const steps: SealStep[] = [];
    const report = await store.sealSearchIndex({
      onStep: async (step) => {
        steps.push(step);
        const marker = `marker${steps.length}`;
        const id = await store.appendMessage({ sessionId: "a", role: "user", content: `common ${marker}` });
        markers.push([marker, id]);
        expected.add(id);
        for (const s of [store, fresh]) {
          expectEachOnce(await pagedIds(s, "common", 11), expected);
          expect((await s.searchMessages(marker)).map((h) => h.id)).toEqual([id]);
        }
      },
    });
    expect(steps).toEqual(["chosen", "sealed-built", "open-built", "switched", "dropped"]);
    expect(report).toEqual({ outcome: "sealed", range: { lo: 0, hi: 50 }, merged: 0 });
    await expectWholeLayout(c);
    for (const s of [store, fresh]) {
      expectEachOnce(await pagedIds(s, "common", 8), expected);
      for (const [marker, id] of markers)
        expect((await s.searchMessages(marker)).map((h) => h.id)).toEqual([id]);
    }
    expectEachOnce([...expected], await matchingIds(c, "common"));
  });

  it("a store on stale ranges (another store sealed and merged, the old indexes dropped) still finds every row once", async () => {
    const { schema, store: sealer, c } = await storeWithSession();
    const stale = await open({ schema, wordIndex: { refreshMs: 3_600_000 } });
    // `stale` read the ranges at open: one open range. Then three seals, one a merge.
    const ids = await appendCommon(sealer, 30, "t");
    await sealer.sealSearchIndex();
    expectEachOnce(await pagedIds(stale, "common", 6), ids);
    ids.push(...(await appendCommon(sealer, 30, "u")));
    await sealer.sealSearchIndex();
    ids.push(...(await appendCommon(sealer, 40, "v")));
    await sealer.sealSearchIndex();
    expect((await expectWholeLayout(c)).map((r) => [r.lo, r.hi])).toEqual([
      [0, 60],
      [60, 100],
      [100, null],
    ]);
    ids.push(...(await appendCommon(sealer, 15, "w")));
    // The indexes `stale` would use are gone: its parts scan, and still find every row once.
    expect(Object.keys(await wordIndexes(c))).not.toContain("idx_messages_words_open_0");
    for (const store of [stale, sealer]) {
      expectEachOnce(await pagedIds(store, "common", 6), ids);
      expectEachOnce(await pagedIds(store, "docker", 4), await matchingIds(c, "docker"));
      expect((await store.searchMessages("w14")).map((h) => h.id)).toEqual([ids[ids.length - 1]]);
    }
  });

  it("pages of a query whose hits tie (equal ranks across sealed and open ranges) never repeat or skip a hit", async () => {
    const { store } = await storeWithSession();
    const same = async (n: number) =>
      store.appendMessages(
        Array.from({ length: n }, () => ({ sessionId: "a", role: "user", content: "tie tie breaker" })),
      );
    const ids = [...(await same(13))];
    await store.sealSearchIndex();
    ids.push(...(await same(9)));
    await store.sealSearchIndex();
    ids.push(...(await same(11)));
    ids.push(...(await store.appendMessages([{ sessionId: "a", role: "user", content: "tie tie tie tie" }])));
    for (const size of [1, 4, 7, 20]) {
      const paged = await pagedIds(store, "tie", size);
      expectEachOnce(paged, ids);
      // The one message that says it four times ranks first, on every backend's measure.
      expect(paged[0]).toBe(ids[ids.length - 1]);
    }
    // The same order whatever the page size.
    expect(await pagedIds(store, "tie", 3)).toEqual(await pagedIds(store, "tie", 34));
  });

  it("a seal waits for nobody: another store's seal during it is told busy", async () => {
    const { schema, store } = await storeWithSession();
    const other = await open({ schema });
    await appendCommon(store, 10, "k");
    let during: unknown = null;
    await store.sealSearchIndex({
      onStep: async (step) => {
        if (step === "sealed-built") during = await other.sealSearchIndex();
      },
    });
    expect(during).toEqual({ outcome: "busy", merged: 0 });
  });

  it("close() during a seal stops it; the next seal removes what it left and the layout is whole", async () => {
    const { schema, c } = await storeWithSession();
    const closing = await openPostgresSessionStore({
      connectionString: url,
      schema,
      wordIndex: { dropDelayMs: 0 },
    });
    await appendCommon(closing, 20, "q");
    const sealing = closing.sealSearchIndex({
      onStep: async (step) => {
        if (step === "sealed-built") void closing.close();
        // Let close() cancel what runs next.
        await new Promise((r) => setTimeout(r, 50));
      },
    });
    await expect(sealing).rejects.toMatchObject({ code: "STORE_CLOSED" });
    const store = await open({ schema, wordIndex: { dropDelayMs: 0 } });
    expect((await store.sealSearchIndex()).outcome).toBe("sealed");
    await expectWholeLayout(c);
    expectEachOnce(await pagedIds(store, "common", 50), await matchingIds(c, "common"));
  });

  it("verifySearchIndex names a seal held back by an older transaction, and that transaction's backend", async () => {
    const { schema, store } = await storeWithSession();
    await appendCommon(store, 30, "h");
    // A transaction of the database older than the seal (it reads nothing of this schema's).
    const holder = await client(schema);
    await holder.query("SET application_name = 'seal-test-holder'");
    await holder.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
    const holderPid = (await holder.query("SELECT pg_backend_pid() AS pid, txid_current()")).rows[0].pid;
    const steps: SealStep[] = [];
    const sealing = store.sealSearchIndex({ force: true, onStep: (step) => void steps.push(step) });
    const detail = async () =>
      (await store.verifySearchIndex()).indexes.find((i) => i.name === "idx_messages_words")!.detail!;
    // The build waits for the older transactions one at a time, in no set order: other test
    // files' may be named first, so poll until the holder's turn (it lasts until its commit).
    const named = `backend ${holderPid} (`;
    let seen = await detail();
    for (const deadline = Date.now() + 30_000; !seen.includes(named) && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 50));
      seen = await detail();
    }
    expect(seen).toMatch(
      new RegExp(
        `a seal of the ranges \\(backend \\d+\\) has waited \\d+ s for older transactions of the database to end: ` +
          `(.*; )?backend ${holderPid} \\(idle in transaction, transaction open \\d+ s, seal-test-holder\\)(;|$)`,
      ),
    );
    // Held back before its first build ended: nothing switched yet.
    expect(steps).toEqual(["chosen"]);
    await holder.query("COMMIT");
    expect((await sealing).outcome).toBe("sealed");
    expect(await detail()).not.toMatch(/a seal of the ranges/);
  });
});

describe("a pool of the caller's", () => {
  it("gets its connections back without the settings a ranked query ran with", async () => {
    const schema = freshSchema();
    await (await open({ schema })).close();
    const pool = new pg.Pool({ connectionString: url, max: 1, options: `-c search_path="${schema}",public` });
    try {
      const store = await openPostgresSessionStore({ pool });
      await store.createSession({ id: "a", source: "cli" });
      await appendCommon(store, 10, "p");
      await store.sealSearchIndex();
      expect((await store.searchMessages("common", { limit: 3 })).length).toBe(3);
      const settings = await pool.query(
        "SELECT current_setting('enable_seqscan') AS seq, current_setting('enable_sort') AS sort, current_setting('plan_cache_mode') AS plans",
      );
      expect(settings.rows).toEqual([{ seq: "on", sort: "on", plans: "auto" }]);
      await store.close();
    } finally {
      await pool.end();
    }
  });
});

describe("schema v6: a v5 store upgrades", () => {
  it("the v5 RUM index of every row becomes one sealed range and an open range; searches find what they found", async () => {
    const schema = freshSchema();
    const c = await client(schema);
    await ensureExtensions(url);
    for (const step of PG_MIGRATIONS.filter((s) => s.version <= 5))
      for (const statement of migrationStatements(step, { rum: true })) await c.query(statement);
    await c.query("CREATE TABLE schema_version (version integer NOT NULL)");
    await c.query("INSERT INTO schema_version VALUES (5)");
    await c.query("INSERT INTO sessions (id, source, started_at) VALUES ('a', 'cli', 1000)");
    const texts = Array.from(
      { length: 120 },
      (_, i) => `common v5 row${i} ${i % 4 === 0 ? "docker compose" : "kubectl"}`,
    );
    for (const [i, content] of texts.entries()) {
      const { vector, grams } = searchColumns(content, null, null);
      await c.query(
        `INSERT INTO messages (session_id, role, content, timestamp, search_vector, search_grams)
         VALUES ('a', 'user', $1, $2, $3::tsvector, $4::tsvector)`,
        [content, 1000 + i, vector, grams],
      );
    }
    expect(await wordIndexes(c)).toEqual({ idx_messages_search_vector: "rum" });
    const store = await open({ schema });
    expect(store.migration).toMatchObject({ fromVersion: 5, toVersion: 10 });
    expect(store.migration.applied).toEqual([
      expect.stringMatching(/^v6: /),
      expect.stringMatching(/^v7: /),
      expect.stringMatching(/^v8: /),
      expect.stringMatching(/^v9: /),
      expect.stringMatching(/^v10: /),
    ]);
    expect((await expectWholeLayout(c)).map((r) => [r.lo, r.hi])).toEqual([
      [0, 120],
      [120, null],
    ]);
    for (const [query, tsquery] of [
      ["common", "common"],
      ["docker", "docker"],
      ['"docker compose"', "docker <-> compose"],
      ["kube*", "kube:*"],
    ] as const)
      expectEachOnce(await pagedIds(store, query, 13), await matchingIds(c, tsquery));
    expect((await store.verifySearchIndex()).ok).toBe(true);
  });
});
