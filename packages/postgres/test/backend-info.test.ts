import { randomBytes } from "node:crypto";
import { BackendError, HermesStoreError } from "@hermes/core";
import { openPostgresSessionStore, type PostgresSessionStore } from "@hermes/postgres";
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";

const url = inject("pgConnectionString");
if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);

const opened: PostgresSessionStore[] = [];
const pools: pg.Pool[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  for (const pool of pools.splice(0)) await pool.end();
});
const fresh = () => `t_${randomBytes(6).toString("hex")}`;

async function open(o: { schema?: string; pool?: pg.Pool }): Promise<PostgresSessionStore> {
  const store = await openPostgresSessionStore(
    o.pool !== undefined ? { pool: o.pool } : { connectionString: url, schema: o.schema, maxConnections: 2 },
  );
  opened.push(store);
  return store;
}

async function serverVersion(): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ server_version: string }>("SHOW server_version")).rows[0]!.server_version;
  } finally {
    await client.end();
  }
}

describe("the PostgreSQL store's backend shapes", () => {
  it("backend is { kind: 'postgres', schema, serverVersion }, frozen; the store has no path", async () => {
    const schema = fresh();
    const store = await open({ schema });
    expect(store.backend).toEqual({ kind: "postgres", schema, serverVersion: await serverVersion() });
    expect(Object.isFrozen(store.backend)).toBe(true);
    expect("path" in store).toBe(false);
  });

  it("on a pool of the caller's, backend.schema is the schema its connections use", async () => {
    const schema = fresh();
    const setup = new pg.Client({ connectionString: url });
    await setup.connect();
    await setup.query(`CREATE SCHEMA ${schema}`);
    await setup.end();
    const pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema},public` });
    pools.push(pool);
    const store = await open({ pool });
    expect(store.backend).toMatchObject({ kind: "postgres", schema });
    await store.createSession({ id: "s1", source: "cli" });
    const { rows } = await pool.query(`SELECT id FROM ${schema}.sessions`);
    expect(rows).toEqual([{ id: "s1" }]);
  });

  it("stats() is tagged backend: 'postgres' with the write counters alone (no WAL figures)", async () => {
    const store = await open({ schema: fresh() });
    await store.createSession({ id: "s1", source: "cli" });
    await store.appendMessage({ sessionId: "s1", role: "user", content: "hi" });
    // Exactly the write counters of @hermes/core: no WAL, checkpoint or hand-off figures.
    expect(store.stats()).toEqual({
      backend: "postgres",
      writes: 2,
      failedWrites: 0,
      groupsCommitted: 2,
      writesPerGroupMean: 1,
      writesPerGroupMax: 1,
      attempts: 2,
      retries: 0,
      busyErrors: 0,
      waitedMs: 0,
      busyTimeouts: 0,
    });
  });
});

describe("BACKEND_ERROR", () => {
  it("a server error with no equivalent is a BackendError: the SQLSTATE in backendCode, pg's error in cause", async () => {
    const schema = fresh();
    const store = await open({ schema });
    await store.createSession({ id: "s1", source: "cli" });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP TABLE ${schema}.messages`);
    await admin.end();
    const error = await store.getMessages("s1").then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BackendError);
    expect(error).toBeInstanceOf(HermesStoreError);
    // undefined_table
    expect(error).toMatchObject({ code: "BACKEND_ERROR", backendCode: "42P01" });
    expect((error as Error).cause).toBeInstanceOf(pg.DatabaseError);
    expect((error as Error).message).toContain("42P01");
  });
});
