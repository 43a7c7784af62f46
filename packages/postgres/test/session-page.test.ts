import { type SessionPageRow, type SessionStore, sessionPageArguments } from "@hermes/core";
import { PG_MIGRATIONS } from "@hermes/postgres";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { migrationStatements } from "../dist/migrations/pg-migration.js";
import { createPgDb } from "../dist/pg-database.js";
import { sessionPageByBounds } from "../dist/portable/session-page-by-bounds.js";
import { ensureExtensions } from "./helpers/extensions.js";
import { freshSchema, serverUrl, storesClosedAfterEach } from "./helpers/test-stores.js";

// The unfiltered sessions page proven from the newest activity (schema v5's timestamp index,
// portable/session-page-by-bounds.ts) against the full order, which a filter keeping every
// source still takes: a history built to defeat each shortcut of the proof, paged in pages
// small enough that the first rounds cannot prove them.

const url = serverUrl();
const openStore = storesClosedAfterEach(url);
const T0 = 1_767_225_600;
const SOURCES = ["cli", "telegram", "subagent"];

/** A client and a pool whose queries run in `schema`. */
async function connect(schema: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`SET search_path = "${schema}", public`);
  const pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path="${schema}",public` });
  return { c, db: createPgDb(pool), end: async () => Promise.all([c.end(), pool.end()]) };
}

/** Every page of `listSessionPage` with these options, following the cursor. */
async function allPages(
  store: SessionStore,
  o: { limit: number; sources?: string[] },
): Promise<SessionPageRow[]> {
  const rows: SessionPageRow[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await store.listSessionPage({ ...o, ...(cursor ? { cursor } : {}) });
    rows.push(...page.sessions);
    if (page.nextCursor === null) return rows;
    cursor = page.nextCursor;
  }
}

/**
 * Sessions and messages written straight into the tables: 300 plain sessions in time order,
 * an old chain whose deepest continuation has a newer message than all of them, a session with
 * no message started after everything, ten whose only message is older than their start, a
 * message of the oldest id moved to the newest time, a late import (a new id with an old time),
 * 60 chains tied on the same activity, a branch, a parent cycle (listed nowhere) and a chain
 * deeper than the depth bound.
 */
async function seedHistory(c: pg.Client): Promise<void> {
  const t = (s: number) => T0 + s;
  await c.query(
    `INSERT INTO sessions (id, source, started_at, ended_at, end_reason)
     SELECT 'plain_' || lpad(i::text, 3, '0'), CASE WHEN i % 2 = 0 THEN 'cli' ELSE 'telegram' END,
       $1::float8 + i * 10, $1::float8 + i * 10 + 5, 'user_exit' FROM generate_series(0, 299) i`,
    [T0],
  );
  await c.query(
    `INSERT INTO messages (session_id, role, content, timestamp)
     SELECT 'plain_' || lpad(i::text, 3, '0'), r, 'plain ' || i, $1::float8 + i * 10 + CASE r WHEN 'user' THEN 1 ELSE 2 END
     FROM generate_series(0, 299) i, unnest(ARRAY['user', 'assistant']) r ORDER BY i, r DESC`,
    [T0],
  );
  const session = (id: string, started: number, extra: Record<string, unknown> = {}) =>
    c.query(
      `INSERT INTO sessions (id, source, started_at, parent_session_id, ended_at, end_reason)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, extra.source ?? "cli", started, extra.parent ?? null, extra.ended ?? null, extra.reason ?? null],
    );
  const say = (id: string, at: number) =>
    c.query("INSERT INTO messages (session_id, role, content, timestamp) VALUES ($1, 'user', $1, $2)", [
      id,
      at,
    ]);
  await session("old_top", t(-1000), { ended: t(-900), reason: "compression" });
  await say("old_top", t(-950));
  await session("old_c1", t(-900), { parent: "old_top", ended: t(-800), reason: "compression" });
  await session("old_c2", t(-800), { parent: "old_c1", source: "subagent" });
  await say("old_c2", t(5000));
  await session("empty_new", t(6000));
  // Started after everything but with older messages: they fill the newest sessions read, so
  // empty_new (no message) is named by neither read in a small first round.
  for (let i = 0; i < 10; i++) {
    await session(`backdated_${i}`, t(7000 + i), { ended: t(7100), reason: "user_exit" });
    await say(`backdated_${i}`, t(5 + i));
  }
  await c.query("UPDATE messages SET timestamp = $1 WHERE id = (SELECT min(id) FROM messages)", [t(8000)]);
  await say("plain_150", t(-50_000));
  await c.query(
    `INSERT INTO sessions (id, source, started_at) SELECT 'tie_' || lpad(i::text, 2, '0'), 'telegram', $1::float8 + i
     FROM generate_series(0, 59) i`,
    [t(1500)],
  );
  await c.query(
    `INSERT INTO messages (session_id, role, content, timestamp) SELECT 'tie_' || lpad(i::text, 2, '0'), 'user', 'tie', $1
     FROM generate_series(0, 59) i`,
    [t(2000)],
  );
  await session("br_parent", t(2990), { ended: t(2999), reason: "branched" });
  await say("br_parent", t(2995));
  await session("br_child", t(3000), { parent: "br_parent" });
  await say("br_child", t(3002));
  await session("cyc_a", t(100));
  await session("cyc_b", t(101), { parent: "cyc_a" });
  await c.query("UPDATE sessions SET parent_session_id = 'cyc_b' WHERE id = 'cyc_a'");
  await say("cyc_a", t(9000));
  await c.query(
    `INSERT INTO sessions (id, source, started_at, parent_session_id)
     SELECT 'deep_' || lpad(i::text, 3, '0'), 'subagent', $1::float8 + i,
       CASE WHEN i = 0 THEN NULL ELSE 'deep_' || lpad((i - 1)::text, 3, '0') END
     FROM generate_series(0, 102) i`,
    [t(-100_000)],
  );
  await say("deep_102", t(9500));
  await say("deep_099", t(-60_000));
}

describe("sessions page from the newest activity (PostgreSQL)", () => {
  it("pages of 1, 2, 5 and 50 through the cursor equal the full order, row for row", async () => {
    const schema = freshSchema();
    const store = await openStore({ schema });
    const { c, end } = await connect(schema);
    try {
      await seedHistory(c);
      const first = (await store.listSessionPage({ limit: 6 })).sessions.map((r) => r.id);
      // plain_000's first message moved to the newest time; empty_new started after every
      // message; old_top's chain has old_c2's message; the cycle and deep_101/102 are in no chain.
      expect(first).toEqual(["plain_000", "empty_new", "old_top", "br_child", "br_parent", "plain_299"]);
      const full = await allPages(store, { limit: 500, sources: SOURCES });
      const ids = full.map((r) => r.id);
      expect(ids).not.toContain("cyc_a");
      expect(ids).not.toContain("old_c2");
      expect(full.find((r) => r.id === "deep_000")).toMatchObject({
        chain_sessions: 100,
        chain_last_active: T0 - 60_000,
      });
      expect(full.find((r) => r.id === "backdated_0")?.chain_last_active).toBe(T0 + 5);
      expect(full).toHaveLength(300 + 60 + 15);
      for (const limit of [1, 2, 5, 50]) {
        expect(await allPages(store, { limit }), `limit ${limit}`).toEqual(full);
      }
    } finally {
      await end();
    }
  });

  it("proves the first page and pages after a cursor without the full order, ties at the bound included", async () => {
    const schema = freshSchema();
    const store = await openStore({ schema });
    const { c, db, end } = await connect(schema);
    try {
      await seedHistory(c);
      const full = await allPages(store, { limit: 500, sources: SOURCES });
      const cursorAt = (i: number) =>
        Buffer.from(JSON.stringify([full[i]!.chain_last_active, full[i]!.started_at, full[i]!.id])).toString(
          "base64url",
        );
      const tieStart = full.findIndex((r) => r.id.startsWith("tie_"));
      for (const [limit, after] of [
        [1, -1],
        [2, -1],
        [50, -1],
        [2, 0],
        [3, tieStart + 10],
        [2, tieStart - 1],
        [7, full.length - 5],
      ] as const) {
        const a = sessionPageArguments({ limit, ...(after >= 0 ? { cursor: cursorAt(after) } : {}) });
        const rows = await sessionPageByBounds(db, a);
        const expected = full.slice(after + 1, after + 2 + limit);
        expect(
          rows?.map((r) => r.id),
          `limit ${limit} after ${after}`,
        ).toEqual(expected.map((r) => r.id));
        expect(rows?.map((r) => r.chain_last_active)).toEqual(expected.map((r) => r.chain_last_active));
      }
      // A filtered page is not read this way.
      expect(await sessionPageByBounds(db, sessionPageArguments({ sources: ["cli"] }))).toBeNull();
    } finally {
      await end();
    }
  });

  it("a v4 schema upgrades to v5 (the timestamp index, then v6 to v8) in place and lists as before", async () => {
    const schema = freshSchema();
    const { c, end } = await connect(schema);
    try {
      await c.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await ensureExtensions(url);
      const rum =
        (await c.query("SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'rum'")).rows[0].n > 0;
      for (const step of PG_MIGRATIONS.filter((s) => s.version <= 4))
        for (const statement of migrationStatements(step, { rum })) await c.query(statement);
      await c.query("CREATE TABLE schema_version (version integer NOT NULL)");
      await c.query("INSERT INTO schema_version VALUES (4)");
      await seedHistory(c);
      const indexes = async () =>
        (
          await c.query(
            "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname = 'idx_messages_timestamp'",
            [schema],
          )
        ).rows.length;
      expect(await indexes()).toBe(0);
      const store = await openStore({ schema });
      expect(store.migration).toMatchObject({ fromVersion: 4, toVersion: 10, newerVersion: false });
      expect(store.migration.applied).toEqual([
        expect.stringMatching(/^v5: sessions page/),
        expect.stringMatching(/^v6: /),
        expect.stringMatching(/^v7: /),
        expect.stringMatching(/^v8: /),
        expect.stringMatching(/^v9: /),
        expect.stringMatching(/^v10: /),
      ]);
      expect(await indexes()).toBe(1);
      expect(await allPages(store, { limit: 20 })).toEqual(
        await allPages(store, { limit: 500, sources: SOURCES }),
      );
    } finally {
      await end();
    }
  });
});
