import { join } from "node:path";
import type { SessionPage, SessionPageOptions } from "@hermes/core";
import { openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { DatabaseConnection } from "../dist/database-connection.js";
import { keptSessionOrder } from "../dist/portable/session-order-cache.js";
import { listSessionPage } from "../dist/portable/session-page.js";
import type { StoreContext } from "../dist/store-context.js";
import { tempDir } from "./helpers/temp-dir.js";

// A read-only store on a file without our search index keeps the full order of the sessions
// page per `PRAGMA data_version`: it must give, after every commit of another connection, the
// rows the full order's SQL gives, and read the order again only when something committed.

const T0 = 1_760_000_000;
const opened: SessionStore[] = [];
const conns: DatabaseConnection[] = [];
const raws: Database.Database[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const c of conns.splice(0)) c.close();
  for (const r of raws.splice(0)) r.close();
});

function connection(path: string): DatabaseConnection {
  const conn = new DatabaseConnection(path, {
    readOnly: true,
    busyTimeoutMs: 1000,
    synchronous: "NORMAL",
    journalSizeLimit: 1 << 20,
  });
  conns.push(conn);
  return conn;
}

/** A context on `conn` that the page reads: with `readOnly`, it keeps the order; without, it never does. */
function context(conn: DatabaseConnection, cached: boolean): StoreContext {
  const readOnly = { reader: () => ({ conn, own: false, release() {} }), refresh() {}, generation: 0 };
  return { conn, reads: null, ...(cached ? { readOnly } : {}) } as unknown as StoreContext;
}

/** Every page through the cursor, in pages of `limit`. */
async function allPages(page: (o: SessionPageOptions) => Promise<SessionPage> | SessionPage, limit: number) {
  const pages: SessionPage[] = [];
  let cursor: string | null = null;
  do {
    const p: SessionPage = await page({ limit, ...(cursor === null ? {} : { cursor }) });
    pages.push(p);
    cursor = p.nextCursor;
  } while (cursor !== null);
  return pages;
}

/** What the full order's SQL lists now, on a connection of its own that keeps nothing. */
function uncached(path: string, limit: number) {
  const ctx = context(connection(path), false);
  return allPages((o) => listSessionPage(ctx, o), limit);
}

/**
 * 120 sessions with compression chains and branches, written by our writable store without
 * the short-CJK search index (no short CJK search ran), as a file only the agent wrote has none.
 */
async function seed(path: string): Promise<void> {
  let now = T0;
  const store = await openSessionStore({ path, clock: () => now, synchronous: "OFF" });
  for (let i = 0; i < 120; i++) {
    const id = `s${String(i).padStart(3, "0")}`;
    now = T0 + i * 60;
    const parent = i % 7 === 3 ? `s${String(i - 1).padStart(3, "0")}` : undefined;
    if (parent !== undefined) await store.endSession(parent, i % 14 === 3 ? "branched" : "compression");
    await store.createSession({
      id,
      source: i % 2 ? "cli" : "telegram",
      ...(parent ? { parentSessionId: parent } : {}),
    });
    for (let k = 0; k < 2; k++) {
      now += 5;
      await store.appendMessage({ sessionId: id, role: "user", content: `message ${k} of ${id}` });
    }
  }
  await store.close();
}

/** The agent's changes, one commit each, as another connection makes them. */
function agentChanges(agent: Database.Database): Array<[string, () => void]> {
  const insert = agent.prepare(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'from the agent', ?)",
  );
  return [
    ["an old session gets the newest message", () => insert.run("s010", T0 + 400 * 60)],
    ["a message from the past", () => insert.run("s011", T0 + 10)],
    [
      "a timestamp moves to the front",
      () => agent.prepare("UPDATE messages SET timestamp = ? WHERE id = 4").run(T0 + 500 * 60),
    ],
    [
      "a new empty session",
      () =>
        agent
          .prepare("INSERT INTO sessions (id, source, started_at) VALUES ('agent_new', 'cli', ?)")
          .run(T0 + 600 * 60),
    ],
    [
      "a deletion",
      () => {
        agent.prepare("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = 's002'").run();
        agent.prepare("DELETE FROM messages WHERE session_id = 's002'").run();
        agent.prepare("DELETE FROM sessions WHERE id = 's002'").run();
      },
    ],
    [
      "a reopened branch parent",
      () => agent.prepare("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = 's016'").run(),
    ],
    ["a title", () => agent.prepare("UPDATE sessions SET title = 'renamed' WHERE id = 's050'").run()],
  ];
}

/** A seeded file, the agent's own connection to it, and a read-only connection with the cache. */
async function seededReadOnly() {
  const path = join(tempDir(), "state.db");
  await seed(path);
  const agent = new Database(path, { timeout: 1000 });
  raws.push(agent);
  const conn = connection(path);
  return { path, agent, conn, ctx: context(conn, true) };
}

describe("the sessions page of a read-only file without our index", () => {
  it("reads the order once per change of the file, and pages from it as the full order does", async () => {
    const { path, agent, conn, ctx } = await seededReadOnly();
    // The first page at a data_version is the SQL's; the second reads the order and keeps it.
    const first = listSessionPage(ctx, { limit: 10 });
    expect(keptSessionOrder(conn)).toBeNull();
    expect(listSessionPage(ctx, { limit: 10 })).toEqual(first);
    const kept = keptSessionOrder(conn);
    expect(kept).not.toBeNull();
    // Every page after it, and the first again: the same order, not read again.
    const pages = await allPages((o) => listSessionPage(ctx, o), 10);
    expect(keptSessionOrder(conn)).toBe(kept);
    expect(pages[0]).toEqual(first);
    expect(pages).toEqual(await uncached(path, 10));
    let before = kept!;
    for (const [what, change] of agentChanges(agent)) {
      change();
      const now = await allPages((o) => listSessionPage(ctx, o), 7);
      const order = keptSessionOrder(conn);
      expect(order, what).not.toBeNull();
      expect(order, what).not.toBe(before);
      expect(order!.version, what).not.toBe(before.version);
      expect(now, what).toEqual(await uncached(path, 7));
      before = order!;
    }
  });

  it("a cursor taken before another connection's commit continues in the order after it", async () => {
    const { path, agent, conn, ctx } = await seededReadOnly();
    const first = listSessionPage(ctx, { limit: 10 });
    // The next page at this data_version reads the order, which the commit below makes old.
    listSessionPage(ctx, { limit: 10, cursor: first.nextCursor! });
    expect(keptSessionOrder(conn)).not.toBeNull();
    // An old chain's activity moves to just after the cursor's (s030 is far down the first order).
    const last = first.sessions.at(-1)!;
    agent
      .prepare("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'x', ?)")
      .run("s030", last.chain_last_active - 1);
    const after = { limit: 10, cursor: first.nextCursor! };
    const expected = listSessionPage(context(connection(path), false), after);
    expect(expected.sessions[0]!.id).toBe("s030");
    // Once from the SQL (the first page at the new data_version), then from the order read at it.
    expect(listSessionPage(ctx, after)).toEqual(expected);
    expect(listSessionPage(ctx, after)).toEqual(expected);
    expect(keptSessionOrder(conn)).not.toBeNull();
  });

  it("through the store: every page equals the full order after each commit of the agent", async () => {
    const path = join(tempDir(), "state.db");
    await seed(path);
    const agent = new Database(path, { timeout: 1000 });
    raws.push(agent);
    // The agent has the file open (its -wal and -shm exist): read-only stores share it.
    agent.prepare("SELECT count(*) FROM sessions").get();
    // On this thread and in the read pool's workers (each with a connection and an order of its own).
    for (const readers of [0, 2]) {
      const store = await openSessionStore({ path, readOnly: true, readers });
      opened.push(store);
      expect(store.access.readOnlyAccess).toBe("shared");
      expect(await allPages((o) => store.listSessionPage(o), 9)).toEqual(await uncached(path, 9));
    }
    for (const [what, change] of agentChanges(agent)) {
      change();
      for (const store of opened) {
        expect(await allPages((o) => store.listSessionPage(o), 9), what).toEqual(await uncached(path, 9));
      }
    }
  });
});
