import { randomBytes } from "node:crypto";
import type { HermesStoreError } from "@hermes/core";
import {
  openPostgresSessionStore,
  PG_MIGRATIONS,
  type PostgresSessionStore,
  RUM_MISSING,
  searchColumns,
} from "@hermes/postgres";
import { comparableSearch } from "@hermes/postgres/testing";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { migrationStatements } from "../dist/migrations/pg-migration.js";
import { ensureExtensions } from "./helpers/extensions.js";
import { expectWholeLayout } from "./helpers/word-index.js";

const url = inject("pgConnectionString");
if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);

const fresh = (prefix: string) => `${prefix}_${randomBytes(6).toString("hex")}`;
const opened: PostgresSessionStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

/** A client whose queries run in `schema` (created when missing). */
async function client(schema: string, connectionString = url): Promise<pg.Client> {
  const c = new pg.Client({ connectionString });
  await c.connect();
  await c.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await c.query(`SET search_path = "${schema}", public`);
  return c;
}

/** The access method of each search index of `schema`. */
async function indexMethods(c: pg.Client, schema: string): Promise<Record<string, string>> {
  const { rows } = await c.query<{ relname: string; amname: string }>(
    `SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
       JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relname LIKE 'idx_messages_search%' ORDER BY 1`,
    [schema],
  );
  return Object.fromEntries(rows.map((r) => [r.relname, r.amname]));
}

const MIXED = [
  "Deploy the docker image to staging",
  "docker compose up failed: connection refused",
  "chat-send retried twice, connection refused again",
  "广西桂林的山水很美",
  "数据库连接池满了，桂林的服务器重启",
  "龙年快乐 deploy done",
  "kubectl rollout status for the deployment",
];

/** The schema as version `version` of the store wrote it, with one session `s`. */
async function olderSchema(c: pg.Client, version: number, rum: boolean): Promise<void> {
  await ensureExtensions(url);
  for (const step of PG_MIGRATIONS.filter((s) => s.version <= version))
    for (const statement of migrationStatements(step, { rum })) await c.query(statement);
  await c.query("CREATE TABLE schema_version (version integer NOT NULL)");
  await c.query("INSERT INTO schema_version VALUES ($1)", [version]);
  await c.query("INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 1000)");
}

describe("schema v3: existing databases upgrade", () => {
  it("a schema written by v2 (grams inside the word vector, bm25 columns) upgrades in place and searches as before", async () => {
    const schema = fresh("v2");
    const c = await client(schema);
    try {
      await olderSchema(c, 2, false);
      for (const [i, content] of MIXED.entries()) {
        const { vector, grams } = searchColumns(content, null, null);
        // v2 wrote one vector: the words, then the gram lexemes.
        await c.query(
          `INSERT INTO messages (session_id, role, content, timestamp, search_vector, search_tokens, search_trigrams)
           VALUES ('s', 'user', $1, $2, $3::tsvector, 1, 1)`,
          [content, 1000 + i, `${vector} ${grams}`.trim()],
        );
      }
      const store = await openPostgresSessionStore({ connectionString: url, schema });
      opened.push(store);
      expect(store.migration).toMatchObject({ fromVersion: 2, toVersion: 10, newerVersion: false });
      expect(store.migration.applied).toHaveLength(8);
      expect(store.migration.applied[0]).toMatch(/^v3: /);
      expect(store.migration.applied[1]).toMatch(/^v4: /);
      expect(store.migration.applied[2]).toMatch(/^v5: /);
      expect(store.migration.applied[3]).toMatch(/^v6: /);
      expect(store.migration.applied[4]).toMatch(/^v7: /);
      expect(store.migration.applied[5]).toMatch(/^v8: /);
      expect(store.migration.applied[6]).toMatch(/^v9: /);
      expect(store.migration.applied[7]).toMatch(/^v10: /);
      expect((await store.searchMessages("桂林")).map((h) => h.id)).toHaveLength(2);
      expect((await store.searchMessages("龙")).map((h) => h.id)).toEqual([6]);
      expect((await store.searchMessages("数据库")).map((h) => h.id)).toEqual([5]);
      expect((await store.searchMessages("connection refused")).map((h) => h.id).sort()).toEqual([2, 3]);
      // The grams left the word vector; the bm25 columns and their indexes are gone.
      const left = await c.query(
        `SELECT count(*)::int AS n FROM messages WHERE search_vector @@ '''~'':*'::tsquery`,
      );
      expect(left.rows[0].n).toBe(0);
      const columns = await c.query(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'messages' AND column_name LIKE 'search%' ORDER BY 1",
        [schema],
      );
      expect(columns.rows.map((r) => r.column_name)).toEqual(["search_grams", "search_vector"]);
      // v4: the gram index is GIN on every server (v8: newest-first pages may walk idx_messages_cjk_recent).
      // v6: the word index split, its seven rows in one sealed range (RUM), an empty open one (GIN).
      // v9: pg_trgm's index of the whole table gives way to the sealed range's (expectWholeLayout).
      expect(await indexMethods(c, schema)).toEqual({ idx_messages_search_grams: "gin" });
      expect((await expectWholeLayout(c)).map((r) => [r.lo, r.hi])).toEqual([
        [0, 7],
        [7, null],
      ]);
      expect((await store.verifySearchIndex()).ok).toBe(true);
    } finally {
      await c.end();
    }
  });
});

/** Ids of the messages holding `term` (CJK) in their searched text, newest first, ties by id. */
async function cjkMatches(c: pg.Client, term: string): Promise<number[]> {
  const { rows } = await c.query(
    `SELECT id::int AS id FROM messages
     WHERE strpos(COALESCE(content, '') || ' ' || COALESCE(tool_calls, '') || ' ' || COALESCE(tool_name, ''), $1) > 0
     ORDER BY timestamp DESC, id`,
    [term],
  );
  return rows.map((r) => r.id);
}

describe("schema v8: CJK search off the messages' own grams", () => {
  it("a v3 schema upgrades in place: v4's side table comes and goes, the newest-CJK index is built, CJK search finds as before", async () => {
    const schema = fresh("v3");
    const c = await client(schema);
    try {
      const rum =
        (await c.query("SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'rum'")).rows[0].n > 0;
      await olderSchema(c, 3, rum);
      for (const [i, content] of MIXED.entries()) {
        const { vector, grams } = searchColumns(content, null, null);
        await c.query(
          `INSERT INTO messages (session_id, role, content, timestamp, search_vector, search_grams)
           VALUES ('s', 'user', $1, $2, $3::tsvector, $4::tsvector)`,
          [content, 1000 + i, vector, grams],
        );
      }
      const store = await openPostgresSessionStore({ connectionString: url, schema });
      opened.push(store);
      expect(store.migration).toMatchObject({ fromVersion: 3, toVersion: 10, newerVersion: false });
      expect(store.migration.applied).toEqual([
        expect.stringMatching(/^v4: /),
        expect.stringMatching(/^v5: /),
        expect.stringMatching(/^v6: /),
        expect.stringMatching(/^v7: /),
        expect.stringMatching(/^v8: /),
        expect.stringMatching(/^v9: /),
        expect.stringMatching(/^v10: /),
      ]);
      expect((await c.query("SELECT to_regclass('message_grams') AS t")).rows[0].t).toBeNull();
      const triggers = await c.query(
        "SELECT count(*)::int AS n FROM pg_trigger WHERE tgrelid = 'messages'::regclass AND NOT tgisinternal",
      );
      expect(triggers.rows[0].n).toBe(0);
      // v3's gram index (RUM where installed) is rebuilt as GIN over messages holding CJK only,
      // and the newest of those messages are read off a btree with the same predicate.
      const predicates = await c.query(
        `SELECT c.relname, pg_get_expr(i.indpred, i.indrelid) AS p FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relname IN ('idx_messages_search_grams', 'idx_messages_cjk_recent') ORDER BY 1`,
        [schema],
      );
      expect(predicates.rows).toEqual([
        { relname: "idx_messages_cjk_recent", p: "(search_grams <> ''::tsvector)" },
        { relname: "idx_messages_search_grams", p: "(search_grams <> ''::tsvector)" },
      ]);
      expect((await indexMethods(c, schema)).idx_messages_search_grams).toBe("gin");
      // Newest first: 桂林 in messages 5 (t=1004) and 4 (t=1003).
      expect((await store.searchMessages("桂林")).map((h) => h.id)).toEqual([5, 4]);
      expect((await store.searchMessages("龙")).map((h) => h.id)).toEqual([6]);
      expect((await store.searchMessages("数据库")).map((h) => h.id)).toEqual([5]);
      expect(
        (await store.verifySearchIndex()).indexes.find((i) => i.name === "idx_messages_cjk_recent"),
      ).toEqual({
        name: "idx_messages_cjk_recent",
        kind: "short-cjk",
        status: "ok",
      });
    } finally {
      await c.end();
    }
  });

  it("after every write path, CJK search finds exactly the messages holding the term, newest first", async () => {
    const schema = fresh("grams");
    const store = await openPostgresSessionStore({ connectionString: url, schema });
    opened.push(store);
    const c = await client(schema);
    const expectFound = async () => {
      for (const term of ["龙", "桂林", "数据库"])
        expect({ term, ids: (await store.searchMessages(term, { limit: 100 })).map((h) => h.id) }).toEqual({
          term,
          ids: await cjkMatches(c, term),
        });
    };
    try {
      await store.createSession({ id: "a", source: "cli" });
      await store.createSession({ id: "b", source: "telegram" });
      for (const [i, content] of MIXED.entries())
        await store.appendMessage({ sessionId: i % 2 ? "a" : "b", role: "user", content });
      await store.appendMessages(MIXED.map((content) => ({ sessionId: "a", role: "assistant", content })));
      // Grouped appends (one statement for several calls).
      await Promise.all(
        MIXED.map((content) => store.appendMessage({ sessionId: "b", role: "user", content })),
      );
      await expectFound();
      const fork = await store.forkSession("a");
      await expectFound();
      const exported: unknown[] = [];
      for await (const session of store.exportStream({ sessionIds: ["b"] })) exported.push(session);
      await store.clearMessages("b");
      await expectFound();
      expect(await store.searchMessages("龙", { sourceFilter: ["telegram"] })).toEqual([]);
      expect((await store.importSessions(exported, { onConflict: "replace" })).sessionsReplaced).toBe(1);
      expect((await store.searchMessages("龙", { sourceFilter: ["telegram"] })).length).toBeGreaterThan(0);
      await expectFound();
      expect(await store.deleteSession(fork.id)).toBe(true);
      await expectFound();
      // A row's grams damaged by hand are restored by the rebuild.
      await c.query(
        "UPDATE messages SET search_grams = '' WHERE id = (SELECT min(id) FROM messages WHERE content LIKE '%龙%')",
      );
      expect((await store.searchMessages("龙", { limit: 100 })).length).toBe(
        (await cjkMatches(c, "龙")).length - 1,
      );
      await store.rebuildSearchIndex();
      await expectFound();
      expect((await cjkMatches(c, "龙")).length).toBeGreaterThan(1);
    } finally {
      await c.end();
    }
  });

  it("a longer CJK term's page is sought among the newest messages with CJK first, then among all of them", async () => {
    const schema = fresh("recent");
    const setup = await openPostgresSessionStore({ connectionString: url, schema });
    await setup.close();
    // 400 messages with CJK, seven to a timestamp (ties cut by the window's edge), ids in order.
    const texts = Array.from({ length: 400 }, (_, i) => {
      const parts = [`第${i}条`, "桂林山水"];
      if (i % 3 === 0) parts.push("龙年快乐");
      if (i % 60 === 7) parts.push("广西壮族");
      if (i === 10 || i === 395) parts.push("数据库连接");
      if (i === 245 || i === 251 || i === 399) parts.push("龙凤呈祥");
      return parts.join(" ");
    });
    const c = await client(schema);
    const pool = new pg.Pool({ connectionString: url, options: `-c search_path="${schema}",public`, max: 2 });
    const sent: string[] = [];
    pool.on("connect", (conn) => {
      const query = conn.query.bind(conn) as (...args: unknown[]) => unknown;
      (conn as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const config = args[0] as { text?: string };
        if (typeof config === "object" && config.text !== undefined) sent.push(config.text);
        return query(...args);
      };
    });
    try {
      await c.query("INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 1000)");
      for (const [i, content] of texts.entries()) {
        const { vector, grams } = searchColumns(content, null, null);
        await c.query(
          `INSERT INTO messages (session_id, role, content, timestamp, search_vector, search_grams)
           VALUES ('s', 'user', $1, $2, $3::tsvector, $4::tsvector)`,
          [content, 1000 + Math.floor(i / 7), vector, grams],
        );
      }
      await c.query("ANALYZE messages");
      const store = await openPostgresSessionStore({ pool });
      opened.push(store);
      const pages = [
        { limit: 2, offset: 0 },
        { limit: 3, offset: 5 },
        { limit: 20, offset: 0 },
        { limit: 7, offset: 97 },
      ];
      for (const term of [
        "桂林山",
        "龙年快",
        "广西壮",
        "数据库",
        "龙凤呈",
        "山水龙",
        "桂",
        "龙年",
        "壮",
        "祥",
      ])
        for (const page of pages) {
          const all = await cjkMatches(c, term);
          const hits = await store.searchMessages(term, page);
          expect({ term, page, ids: hits.map((h) => h.id) }).toEqual({
            term,
            page,
            ids: all.slice(page.offset, page.offset + page.limit),
          });
        }
      /** The page of `term` (indexes of the messages), and whether it took a second statement. */
      const page = async (term: string, limit: number, sourceFilter?: string[]) => {
        sent.length = 0;
        const ids = (await store.searchMessages(term, { limit, sourceFilter })).map((h) => h.id - 1);
        // Page statements sent (each with its hits' contexts): two when the first step fell back.
        return { ids, fellBack: sent.filter((t) => t.includes("hermes_ord")).length > 1 };
      };
      // A common term's page fills among the newest 100 (limit 2): one statement, no fallback.
      // Message 399 is alone at its timestamp; 392 to 398 share the one before (by id).
      expect(await page("桂林山", 2)).toEqual({ ids: [399, 392], fellBack: false });
      // Ties at the window's edge (150 for a page of 3): 245 to 251 share a timestamp, and the
      // 150th newest is 246; 251 is in the window with it, so the page fills there.
      expect(await page("龙凤呈", 3)).toEqual({ ids: [399, 245, 251], fellBack: false });
      // With a source filter, ties go by source, then id descending (as on SQLite).
      expect(await page("龙凤呈", 3, ["cli"])).toEqual({ ids: [399, 251, 245], fellBack: false });
      expect(await page("龙年快", 4, ["cli"])).toEqual({ ids: [399, 396, 393, 390], fellBack: false });
      // A rare one does not (message 10 is older than the window): planned over every message.
      expect(await page("数据库", 2)).toEqual({ ids: [395, 10], fellBack: true });
      // A term of one or two characters is planned from its gram's statistics: one statement,
      // common (桂, in every message) or rare (壮, in one of 60).
      expect(await page("桂", 2)).toEqual({ ids: [399, 392], fellBack: false });
      expect(await page("壮", 7)).toEqual({ ids: [367, 307, 247, 187, 127, 67, 7], fellBack: false });
    } finally {
      await c.end();
      await pool.end();
    }
  });
});

describe("without RUM on the server", () => {
  const role = fresh("norum");
  let roleUrl = "";
  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // RUM is not a trusted extension: a database owner who is not a superuser cannot create it.
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      await admin.query(`CREATE DATABASE ${role} OWNER ${role}`);
    } finally {
      await admin.end();
    }
    const u = new URL(url);
    u.username = role;
    u.pathname = `/${role}`;
    roleUrl = u.toString();
  });
  afterAll(async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${role} WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
    } finally {
      await admin.end();
    }
  });

  it("opens with a warning, searches through GIN, and finds what the RUM store finds", async () => {
    // The same clock on both: one second per message, and pairs of equal timestamps (ties).
    const ticking = () => {
      let n = 0;
      return () => 1_700_000_000 + Math.floor(n++ / 2);
    };
    const gin = await openPostgresSessionStore({ connectionString: roleUrl, clock: ticking() });
    opened.push(gin);
    expect(gin.migration.warnings).toEqual([RUM_MISSING]);
    // One GIN index, nothing to seal (never an error).
    expect(gin.searchMethod).toBe("gin");
    expect(await gin.sealSearchIndex()).toEqual({ outcome: "gin", merged: 0 });
    const rum = await openPostgresSessionStore({
      connectionString: url,
      schema: fresh("rum"),
      clock: ticking(),
    });
    opened.push(rum);
    expect(rum.migration.warnings).toEqual([]);
    for (const store of [gin, rum]) {
      await store.createSession({ id: "a", source: "cli" });
      await store.createSession({ id: "b", source: "telegram" });
      for (const [i, content] of [...MIXED, ...MIXED].entries())
        await store.appendMessage({ sessionId: i % 3 === 0 ? "b" : "a", role: "user", content });
    }
    const c = await client("public", roleUrl);
    try {
      expect(await indexMethods(c, "public")).toEqual({
        idx_messages_search_grams: "gin",
        idx_messages_search_trgm: "gin",
        idx_messages_search_vector: "gin",
      });
    } finally {
      await c.end();
    }
    for (const q of [
      "docker",
      "deploy*",
      '"connection refused"',
      "chat-send",
      "docker OR kubectl",
      "桂林",
      "龙",
      "数据库",
      "桂林 NOT 数据",
    ])
      for (const o of [{}, { limit: 3, offset: 1 }, { sourceFilter: ["telegram"] }])
        expect({ q, o, hits: await comparableSearch(gin, q, o) }).toEqual({
          q,
          o,
          hits: await comparableSearch(rum, q, o),
        });
  });
});

describe("a database where RUM is not created yet", () => {
  it("stores of several schemas opened at once all create or find RUM: none fails, none falls back to GIN", async () => {
    const database = fresh("hermes_ext");
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const u = new URL(url);
    u.pathname = `/${database}`;
    try {
      const stores = await Promise.all(
        ["s1", "s2", "s3", "s4"].map((schema) =>
          openPostgresSessionStore({ connectionString: u.toString(), schema }),
        ),
      );
      opened.push(...stores);
      expect(stores.map((s) => s.searchMethod)).toEqual(["rum", "rum", "rum", "rum"]);
      expect(stores.flatMap((s) => s.migration.warnings)).toEqual([]);
    } finally {
      for (const store of opened.splice(0)) await store.close();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    }
  });
});

describe("group commit", () => {
  it("appends queued together share one statement; an unknown session fails its own call only; order and counters hold", async () => {
    const store = await openPostgresSessionStore({ connectionString: url, schema: fresh("g") });
    opened.push(store);
    await store.createSession({ id: "a", source: "cli" });
    await store.createSession({ id: "b", source: "cli" });
    const before = store.stats();
    const calls = Array.from({ length: 60 }, (_, i) =>
      store.appendMessage({
        sessionId: i === 30 ? "ghost" : i % 2 ? "a" : "b",
        role: "user",
        content: `m${i}`,
      }),
    );
    const settled = await Promise.allSettled(calls);
    const failed = settled.flatMap((r, i) =>
      r.status === "rejected" ? [[i, (r.reason as HermesStoreError).code]] : [],
    );
    expect(failed).toEqual([[30, "SESSION_NOT_FOUND"]]);
    const ids = settled.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    // Ids follow call order and the refused call consumed none.
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(ids.at(-1)! - ids[0]!).toBe(58);
    const after = store.stats();
    // Every call a group carried counts as a write; the groups are fewer than the calls.
    expect(after.writes - before.writes).toBe(60);
    expect(after.groupsCommitted - before.groupsCommitted).toBeLessThan(59);
    expect(after.writesPerGroupMax).toBeGreaterThan(1);
    for (const id of ["a", "b"]) {
      const messages = await store.getMessages(id);
      expect(messages.map((m) => m.content)).toEqual(
        Array.from({ length: 60 }, (_, i) => i)
          .filter((i) => i !== 30 && (id === "a" ? i % 2 === 1 : i % 2 === 0))
          .map((i) => `m${i}`),
      );
      expect((await store.getSession(id))?.message_count).toBe(messages.length);
    }
    // A batch with an unknown session writes nothing and consumes no id.
    await expect(
      store.appendMessages([
        { sessionId: "a", role: "user", content: "x" },
        { sessionId: "ghost", role: "user", content: "y" },
      ]),
    ).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    expect(await store.appendMessage({ sessionId: "a", role: "user", content: "next" })).toBe(
      ids.at(-1)! + 1,
    );
  });
});
