import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { HermesStoreError } from "@hermes/core";
import { sql } from "kysely";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createPgDb } from "../dist/pg-database.js";
import { PgWriter } from "../dist/pg-writer.js";
import { freshSchema, serverUrl, storesClosedAfterEach } from "./helpers/test-stores.js";

const run = promisify(execFile);
const url = serverUrl();
const openStore = storesClosedAfterEach(url);
const fresh = freshSchema;
async function open(schema: string, o: { writeDeadlineMs?: number } = {}) {
  return openStore({ schema, maxConnections: 4, ...o });
}
async function rejection(p: Promise<unknown>): Promise<HermesStoreError> {
  try {
    await p;
  } catch (error) {
    return error as HermesStoreError;
  }
  throw new Error("expected the call to reject");
}

describe("migrations under an advisory lock", () => {
  it("several processes opening a new schema together migrate it once", async () => {
    const schema = fresh();
    const dir = mkdtempSync(join(tmpdir(), "pg-open-"));
    const go = join(dir, "go");
    const child = new URL("./child/open-store.mjs", import.meta.url).pathname;
    const children = Array.from({ length: 6 }, () => run(process.execPath, [child, url, schema, go]));
    await new Promise((r) => setTimeout(r, 300));
    writeFileSync(go, "");
    const reports = (await Promise.all(children)).map((r) => JSON.parse(r.stdout));
    const migrated = reports.filter((r) => r.applied.length > 0);
    expect(migrated).toHaveLength(1);
    expect(migrated[0]).toMatchObject({
      fromVersion: null,
      toVersion: 10,
      warnings: [],
      newerVersion: false,
    });
    expect(reports.filter((r) => r.applied.length === 0).every((r) => r.fromVersion === 10)).toBe(true);
    const store = await open(schema);
    expect(store.migration).toEqual({
      fromVersion: 10,
      toVersion: 10,
      applied: [],
      warnings: [],
      newerVersion: false,
    });
    expect(await store.sessionCount({ source: "child" })).toBe(6);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const versions = await client.query(`SELECT version FROM "${schema}".schema_version`);
      expect(versions.rows).toEqual([{ version: 10 }]);
    } finally {
      await client.end();
    }
  });

  it("a second open of a migrated schema applies nothing and keeps the data", async () => {
    const schema = fresh();
    const first = await open(schema);
    expect(first.migration.applied).toHaveLength(10);
    await first.createSession({ id: "s1", source: "cli" });
    const second = await open(schema);
    expect(second.migration.applied).toEqual([]);
    expect((await second.getSession("s1"))?.source).toBe("cli");
  });
});

describe("writes across instances", () => {
  it("two instances racing for one title: exactly one wins, the other gets TITLE_CONFLICT naming it", async () => {
    const schema = fresh();
    const a = await open(schema);
    const b = await open(schema);
    for (let round = 0; round < 20; round++) {
      await a.createSession({ id: `a${round}`, source: "cli" });
      await b.createSession({ id: `b${round}`, source: "cli" });
      const results = await Promise.allSettled([
        a.setSessionTitle(`a${round}`, `Title ${round}`),
        b.setSessionTitle(`b${round}`, `Title ${round}`),
      ]);
      const won = results.filter((r) => r.status === "fulfilled");
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]?.reason.code).toBe("TITLE_CONFLICT");
      const holder = await a.getSessionByTitle(`Title ${round}`);
      expect(lost[0]?.reason.sessionId).toBe(holder?.id);
    }
  });

  it("appends from several instances keep counters exact", async () => {
    const schema = fresh();
    const stores = [await open(schema), await open(schema), await open(schema)];
    await stores[0]!.createSession({ id: "s", source: "gateway" });
    await Promise.all(
      stores.map(async (store, i) => {
        for (let n = 0; n < 30; n++) {
          await store.appendMessage({
            sessionId: "s",
            role: "assistant",
            content: `${i}:${n}`,
            toolCalls: [{ id: n }],
          });
        }
      }),
    );
    const session = await stores[1]!.getSession("s");
    expect(session?.message_count).toBe(90);
    expect(session?.tool_call_count).toBe(90);
    expect(await stores[2]!.messageCount({ sessionId: "s" })).toBe(90);
  });

  it("a lone append (its own statement) draws no id when refused, and writes its row, counters and CJK grams", async () => {
    const schema = fresh();
    const store = await open(schema);
    await store.createSession({ id: "s", source: "cli" });
    const first = await store.appendMessage({ sessionId: "s", role: "user", content: "hello" });
    const error = await rejection(store.appendMessage({ sessionId: "ghost", role: "user", content: "x" }));
    expect(error.code).toBe("SESSION_NOT_FOUND");
    const second = await store.appendMessage({
      sessionId: "s",
      role: "assistant",
      content: "桂林山水",
      toolCalls: [{ id: 1 }, { id: 2 }],
    });
    // The refused call consumed no id, and wrote nothing for the unknown session.
    expect(second).toBe(first + 1);
    expect(await store.messageCount()).toBe(2);
    expect(await store.getSession("ghost")).toBeNull();
    const session = await store.getSession("s");
    expect([session?.message_count, session?.tool_call_count]).toEqual([2, 2]);
    // The row got its CJK grams (short CJK terms are found through them).
    const hits = await store.searchMessages("桂", { limit: 5 });
    expect(hits.map((h) => h.id)).toEqual([second]);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const grams = await client.query(
        `SELECT array_length(tsvector_to_array(search_grams), 1) AS n FROM "${schema}".messages WHERE id = $1`,
        [second],
      );
      expect(grams.rows[0].n).toBeGreaterThan(0);
    } finally {
      await client.end();
    }
  });

  it("retries serialization failures and deadlocks until the deadline, then STORE_BUSY", async () => {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    try {
      const db = createPgDb(pool);
      const writer = new PgWriter(db, 5_000);
      let attempts = 0;
      const fail = (code: string) =>
        sql.raw(`DO $$ BEGIN RAISE EXCEPTION 'injected' USING ERRCODE = '${code}'; END $$`);
      const result = await writer.run(async (trx) => {
        attempts++;
        if (attempts === 1) await fail("40001").execute(trx);
        if (attempts === 2) await fail("40P01").execute(trx);
        return (await sql<{ n: number }>`SELECT 41 + 1 AS n`.execute(trx)).rows[0]?.n;
      });
      expect(result).toBe(42);
      expect(attempts).toBe(3);
      expect(writer.stats.retries).toBe(2);
      expect(writer.stats.busyErrors).toBe(2);
      const impatient = new PgWriter(db, 0);
      const error = await rejection(impatient.run(async (trx) => fail("40001").execute(trx)));
      expect(error.code).toBe("STORE_BUSY");
      // Other errors are not retried.
      let tries = 0;
      const other = await rejection(
        writer.run(async (trx) => {
          tries++;
          return sql`SELECT 1/0`.execute(trx);
        }),
      );
      expect(tries).toBe(1);
      // division_by_zero: BACKEND_ERROR, the SQLSTATE in backendCode, the driver's error as cause.
      expect(other).toMatchObject({ name: "BackendError", code: "BACKEND_ERROR", backendCode: "22012" });
      expect(other.cause).toBeInstanceOf(pg.DatabaseError);
    } finally {
      await pool.end();
    }
  });
});

describe("PostgreSQL limits mapped to the store's errors", () => {
  it("text holding NUL (which PostgreSQL cannot store) is INVALID_ARGUMENT, with nothing written", async () => {
    const store = await open(fresh());
    await store.createSession({ id: "s", source: "cli" });
    const error = await rejection(store.appendMessage({ sessionId: "s", role: "user", content: "a\u0000b" }));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect((await store.getSession("s"))?.message_count).toBe(0);
    expect(await store.messageCount()).toBe(0);
  });

  it("vacuum is VACUUM (ANALYZE): rows stay, statistics are refreshed", async () => {
    const schema = fresh();
    const store = await open(schema);
    await store.createSession({ id: "s", source: "cli" });
    await store.appendMessage({ sessionId: "s", role: "user", content: "hello" });
    await store.vacuum();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const r = await client.query(
        "SELECT last_vacuum IS NOT NULL AS vacuumed, last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'messages'",
        [schema],
      );
      expect(r.rows).toEqual([{ vacuumed: true, analyzed: true }]);
    } finally {
      await client.end();
    }
    expect(await store.messageCount()).toBe(1);
  });

  it("verifySearchIndex reports the search indexes; rebuildSearchIndex restores missing vectors", async () => {
    const schema = fresh();
    const store = await open(schema);
    await store.createSession({ id: "s", source: "cli" });
    await store.appendMessage({ sessionId: "s", role: "user", content: "kubernetes rollout" });
    expect((await store.verifySearchIndex()).ok).toBe(true);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`UPDATE "${schema}".messages SET search_vector = NULL`);
    } finally {
      await client.end();
    }
    expect(await store.searchMessages("kubernetes")).toEqual([]);
    const report = await store.verifySearchIndex();
    expect(report.ok).toBe(false);
    expect(report.indexes.find((i) => i.kind === "unicode61")?.status).toBe("damaged");
    const progress: number[] = [];
    await store.rebuildSearchIndex({ onProgress: (p) => progress.push(p.done) });
    expect(progress.at(-1)).toBe(1);
    expect((await store.searchMessages("kubernetes")).map((h) => h.snippet)).toEqual([
      ">>>kubernetes<<< rollout",
    ]);
    expect((await store.verifySearchIndex()).ok).toBe(true);
  });
});
