import { join } from "node:path";
import { type SessionPageRow, sessionPageArguments } from "@hermes/core";
import { openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { DatabaseConnection } from "../dist/database-connection.js";
import { sessionPageByBounds } from "../dist/portable/session-page-by-bounds.js";
import type { StoreContext } from "../dist/store-context.js";
import { tempDir } from "./helpers/temp-dir.js";

// The sessions page read from the newest activity (the search index's timestamp blocks) must
// give exactly the order of every session, in files whose ids do not follow time and while
// another connection (the agent, which knows nothing of our index) writes.

const T0 = 1_760_000_000;
const opened: SessionStore[] = [];
const raws: Database.Database[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const r of raws.splice(0)) r.close();
});

/** The order of every listed session, computed from the file's rows by hand (no SQL ordering). */
function bruteForceOrder(
  path: string,
): Array<{ id: string; chain_last_active: number; chain_sessions: number }> {
  const raw = new Database(path, { readonly: true });
  const sessions = raw
    .prepare("SELECT id, parent_session_id, started_at, ended_at, end_reason FROM sessions")
    .all() as Array<{
    id: string;
    parent_session_id: string | null;
    started_at: number;
    ended_at: number | null;
    end_reason: string | null;
  }>;
  const newest = new Map<string, number>();
  for (const m of raw.prepare("SELECT session_id, timestamp FROM messages").all() as Array<{
    session_id: string;
    timestamp: number;
  }>) {
    newest.set(m.session_id, Math.max(newest.get(m.session_id) ?? -Infinity, m.timestamp));
  }
  raw.close();
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const top = (id: string) => {
    const s = byId.get(id)!;
    const p = s.parent_session_id === null ? undefined : byId.get(s.parent_session_id);
    return (
      p === undefined || (p.end_reason === "branched" && p.ended_at !== null && s.started_at >= p.ended_at)
    );
  };
  const chains = new Map<string, string[]>();
  for (const s of sessions) {
    let cur = s.id;
    for (let d = 0; !top(cur) && d < 100; d++) cur = byId.get(cur)!.parent_session_id!;
    if (top(cur)) chains.set(cur, [...(chains.get(cur) ?? []), s.id]);
  }
  const own = (id: string) => newest.get(id) ?? byId.get(id)!.started_at;
  return (
    [...chains]
      .map(([id, members]) => ({
        id,
        started: byId.get(id)!.started_at,
        chain_last_active: Math.max(...members.map(own)),
        chain_sessions: members.length - 1,
      }))
      // Newest chain activity first, then the later start, then the larger id.
      .sort(
        (a, b) =>
          b.chain_last_active - a.chain_last_active || b.started - a.started || (a.id < b.id ? 1 : -1),
      )
      .map(({ started: _, ...r }) => r)
  );
}

/** Every page through the store's cursor. */
async function storeOrder(store: SessionStore, limit: number) {
  const rows: SessionPageRow[] = [];
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<SessionStore["listSessionPage"]>> = await store.listSessionPage({
      limit,
      ...(cursor === null ? {} : { cursor }),
    });
    rows.push(...page.sessions);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return rows.map((r) => ({
    id: r.id,
    chain_last_active: r.chain_last_active,
    chain_sessions: r.chain_sessions,
  }));
}

/** The first page read from the bounds alone, on a connection of its own; `null` when unproven. */
function boundsPage(path: string, limit: number): string[] | null {
  const conn = new DatabaseConnection(path, {
    readOnly: true,
    busyTimeoutMs: 1000,
    synchronous: "NORMAL",
    journalSizeLimit: 1 << 20,
  });
  try {
    // The page reads nothing of the context but its connection and the file's layout (v11).
    const ctx = { conn, reads: null } as unknown as StoreContext;
    const params = {
      sources: null,
      models: null,
      started_after: null,
      started_before: null,
      title_pattern: null,
      id_pattern: null,
      after_key: null,
      after_started: null,
      after_id: null,
      limit: limit + 1,
    };
    return sessionPageByBounds(ctx, sessionPageArguments({ limit }), params)?.map((r) => r.id) ?? null;
  } finally {
    conn.close();
  }
}

/**
 * 400 sessions with compression chains and branches. With `late`, message ids do not follow
 * time: every fifth session gets its messages last (high ids, old timestamps).
 */
async function seed(path: string, late = true): Promise<SessionStore> {
  let now = T0;
  const store = await openSessionStore({ path, clock: () => now, synchronous: "OFF" });
  opened.push(store);
  const lateIds: string[] = [];
  for (let i = 0; i < 400; i++) {
    const id = `s${String(i).padStart(3, "0")}`;
    now = T0 + i * 60;
    const parent = i % 7 === 3 ? `s${String(i - 1).padStart(3, "0")}` : undefined;
    if (parent !== undefined) await store.endSession(parent, i % 14 === 3 ? "branched" : "compression");
    await store.createSession({
      id,
      source: i % 2 ? "cli" : "telegram",
      ...(parent ? { parentSessionId: parent } : {}),
    });
    if (late && i % 5 === 0) {
      lateIds.push(id);
      continue;
    }
    for (let k = 0; k < 3; k++) {
      now += 5;
      await store.appendMessage({ sessionId: id, role: "user", content: `message ${k} of ${id}` });
    }
  }
  for (const [n, id] of lateIds.entries()) {
    now = T0 + Number(id.slice(1)) * 60 + 5 + (n % 3);
    await store.appendMessage({ sessionId: id, role: "user", content: `late message of ${id}` });
  }
  // Builds the short-CJK index, whose timestamp blocks the page reads.
  await store.searchMessages("桂");
  return store;
}

describe("the sessions page from the newest activity", () => {
  it("is proven on the first page and gives the order of every session, ids out of time order", async () => {
    const path = join(tempDir(), "state.db");
    const store = await seed(path);
    const first = boundsPage(path, 10);
    expect(first).not.toBeNull();
    const expected = bruteForceOrder(path);
    expect(first).toEqual(expected.slice(0, 11).map((r) => r.id));
    expect(await storeOrder(store, 10)).toEqual(expected);
    expect(await storeOrder(store, 3)).toEqual(expected);
  });

  it("stays exact while another connection appends, moves timestamps, deletes and reopens", async () => {
    const path = join(tempDir(), "state.db");
    // Ids in time order: the first round proves the page, so what it reads must be right.
    const store = await seed(path, false);
    const agent = new Database(path, { timeout: 1000 });
    raws.push(agent);
    const check = async (what: string) => {
      const expected = bruteForceOrder(path);
      expect(await storeOrder(store, 10), what).toEqual(expected);
      const first = boundsPage(path, 10);
      if (first !== null) expect(first, what).toEqual(expected.slice(0, 11).map((r) => r.id));
    };
    const insert = agent.prepare(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'from the agent', ?)",
    );
    // An old session gets the newest message; another a message from the past (a high id).
    insert.run("s010", T0 + 400 * 60);
    insert.run("s011", T0 + 10);
    await check("appends");
    // An old message's timestamp moves to the front (queued by the index's trigger).
    agent.prepare("UPDATE messages SET timestamp = ? WHERE id = 4").run(T0 + 500 * 60);
    await check("a timestamp moved");
    // A long queue of one session's changes, and one change of another session just below them:
    // the queued messages read first all belong to the first session.
    const idsOf = (session: string) =>
      agent.prepare("SELECT id FROM messages WHERE session_id = ?").pluck().all(session) as number[];
    const move = agent.prepare("UPDATE messages SET timestamp = ? WHERE id = ?");
    for (let round = 0; round < 40; round++) {
      for (const id of idsOf("s003")) move.run(T0 + 700 * 60 + round, id);
    }
    move.run(T0 + 699 * 60, idsOf("s008")[0]);
    await check("a long queue");
    expect((await storeOrder(store, 10)).slice(0, 2).map((r) => r.id)).toEqual(["s003", "s008"]);
    // A new session with no messages, started last.
    agent
      .prepare("INSERT INTO sessions (id, source, started_at) VALUES ('agent_new', 'cli', ?)")
      .run(T0 + 600 * 60);
    await check("a new empty session");
    // The newest chain's parent goes (the reference unlinks its children first).
    agent.prepare("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = 's002'").run();
    agent.prepare("DELETE FROM messages WHERE session_id = 's002'").run();
    agent.prepare("DELETE FROM sessions WHERE id = 's002'").run();
    await check("a deletion");
    // A branched parent is reopened: its branch is a continuation again.
    agent.prepare("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = 's016'").run();
    await check("a reopened branch parent");
    // Our own write applies the queue to the blocks; the order is the same.
    await store.appendMessage({ sessionId: "s100", role: "user", content: "ours" });
    await store.searchMessages("桂");
    await check("after the queue is applied");
    expect(boundsPage(path, 10)).not.toBeNull();
  });

  it("leaves the order to the full computation when the index is missing or behind", async () => {
    const path = join(tempDir(), "state.db");
    const store = await seed(path);
    const raw = new Database(path);
    raws.push(raw);
    raw.prepare("UPDATE hermes_search_state SET value = 0 WHERE key = 'ts_blocks_next'").run();
    raw.prepare("UPDATE hermes_search_state SET value = 10 WHERE key = 'ts_blocks_end'").run();
    expect(boundsPage(path, 10)).toBeNull();
    expect(await storeOrder(store, 10)).toEqual(bruteForceOrder(path));
    raw.exec("DROP TRIGGER hermes_search_queue_insert");
    expect(boundsPage(path, 10)).toBeNull();
    expect(await storeOrder(store, 10)).toEqual(bruteForceOrder(path));
  });
});
