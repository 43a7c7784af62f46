import type { HermesStoreError } from "@hermes/core";
import { openPostgresSessionStore } from "@hermes/postgres";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { freshSchema, serverUrl, storesClosedAfterEach } from "./helpers/test-stores.js";

const url = serverUrl();
const openStore = storesClosedAfterEach(url);
const fresh = freshSchema;
async function open(schema: string, readOnly?: boolean) {
  return openStore({ schema, maxConnections: 2, ...(readOnly === undefined ? {} : { readOnly }) });
}

/** Tables and rows of a schema, as text: what a read-only store must leave as it was. */
async function dump(schema: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1",
      [schema],
    );
    const parts = [JSON.stringify(tables.rows)];
    for (const t of ["sessions", "messages", "state_meta"]) {
      const rows = await client.query(`SELECT * FROM "${schema}"."${t}" ORDER BY 1`);
      parts.push(JSON.stringify(rows.rows));
    }
    return parts.join("\n");
  } finally {
    await client.end();
  }
}

describe("openPostgresSessionStore({ readOnly: true })", () => {
  it("reads an existing store, refuses every write with STORE_READ_ONLY, and changes nothing", async () => {
    const schema = fresh();
    const writer = await open(schema);
    await writer.createSession({ id: "s1", source: "cli" });
    await writer.appendMessage({ sessionId: "s1", role: "user", content: "read me only" });
    await writer.setSessionTitle("s1", "Kept");
    const before = await dump(schema);
    const store = await open(schema, true);
    expect(store.readOnly).toBe(true);
    expect(store.readOnlyReason).toContain("readOnly: true");
    expect(store.migration.applied).toEqual([]);
    expect((await store.getMessages("s1")).map((m) => m.content)).toEqual(["read me only"]);
    expect((await store.searchMessages("read")).map((h) => h.session_id)).toEqual(["s1"]);
    expect((await store.listSessionsRich()).map((r) => r.title)).toEqual(["Kept"]);
    const writes: Array<[string, () => Promise<unknown>]> = [
      ["createSession", () => store.createSession({ id: "s2", source: "cli" })],
      ["appendMessage", () => store.appendMessage({ sessionId: "s1", role: "user", content: "x" })],
      ["setSessionTitle", () => store.setSessionTitle("s1", "Other")],
      ["updateTokenCounts", () => store.updateTokenCounts("s1", { inputTokens: 5 })],
      ["deleteSession", () => store.deleteSession("s1")],
      ["pruneSessions", () => store.pruneSessions({ olderThanDays: 0 })],
      ["setMeta", () => store.setMeta("k", "v")],
      ["rebuildSearchIndex", () => store.rebuildSearchIndex()],
      ["forkSession", () => store.forkSession("s1")],
    ];
    for (const [name, write] of writes) {
      const error = (await write().then(
        () => null,
        (e: unknown) => e,
      )) as HermesStoreError | null;
      expect(error?.code, name).toBe("STORE_READ_ONLY");
    }
    expect(await dump(schema)).toBe(before);
  });

  it("an empty schema is STORE_READ_ONLY, and nothing is created", async () => {
    const schema = fresh();
    const error = await openPostgresSessionStore({ connectionString: url, schema, readOnly: true }).catch(
      (e: unknown) => e,
    );
    expect((error as HermesStoreError).code).toBe("STORE_READ_ONLY");
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const found = await client.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [
        schema,
      ]);
      expect(found.rowCount).toBe(0);
    } finally {
      await client.end();
    }
  });

  it("a store of an older schema version is STORE_READ_ONLY (a read-only open never upgrades), and nothing changes", async () => {
    const schema = fresh();
    const writer = await open(schema);
    await writer.createSession({ id: "s1", source: "cli" });
    const current = writer.migration.toVersion ?? 0;
    expect(current).toBeGreaterThan(1);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // Stamp the store one version back, as a store last opened by the previous release is.
      await client.query(`DELETE FROM "${schema}".schema_version WHERE version >= $1`, [current]);
      await client.query(`INSERT INTO "${schema}".schema_version (version) VALUES ($1)`, [current - 1]);
      const before = await dump(schema);
      const error = (await openPostgresSessionStore({ connectionString: url, schema, readOnly: true }).catch(
        (e: unknown) => e,
      )) as HermesStoreError;
      expect(error.code).toBe("STORE_READ_ONLY");
      expect(error.message).toContain(`v${current - 1}`);
      expect(error.message).toContain(`v${current}`);
      expect(await dump(schema)).toBe(before);
    } finally {
      await client.end();
    }
  });
});
