import { statSync } from "node:fs";
import { join } from "node:path";
import { manualClock } from "@hermes/conformance";
import { openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { startChild } from "./helpers/child-process.js";
import { copyOfSample, tempDir } from "./helpers/temp-dir.js";

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function open(path: string, clock: () => number = manualClock()): Promise<SessionStore> {
  const store = await openSessionStore({ path, clock });
  opened.push(store);
  return store;
}

/** A second, plain connection to the same file: what another process (or the reference) sees. */
function raw(path: string, fn: (db: Database.Database) => void): void {
  const db = new Database(path);
  try {
    fn(db);
  } finally {
    db.close();
  }
}

/** SQLite's own verdicts on a file: page-level integrity and both FTS indexes against `messages`. */
function checkIntegrity(path: string): void {
  raw(path, (db) => {
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(db.pragma("foreign_key_check")).toEqual([]);
    // Throws SQLITE_CORRUPT_VTAB when an index disagrees with its content table.
    db.exec("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')");
    db.exec("INSERT INTO messages_fts_trigram(messages_fts_trigram) VALUES('integrity-check')");
  });
}

describe("messages on SQLite: rows other writers left behind", () => {
  it("tolerates invalid JSON row by row in getMessages, conversations and exports", async () => {
    const path = join(tempDir(), "state.db");
    const clock = manualClock(1_767_225_600);
    const store = await open(path, clock);
    await store.createSession({ id: "s1", source: "cli" });
    await store.appendMessage({ sessionId: "s1", role: "user", content: "first" });
    raw(path, (db) => {
      const insert = db.prepare(
        `INSERT INTO messages (session_id, role, content, tool_calls, reasoning_details,
           codex_reasoning_items, codex_message_items, timestamp)
         VALUES ('s1', ?, ?, ?, ?, ?, ?, ?)`,
      );
      insert.run("assistant", "bad json", "[{not json", "{bad", "[1,", "nope", 1_767_225_700);
      insert.run("assistant", "empty texts", "", "", "", "", 1_767_225_701);
      insert.run("assistant", "scalars", "7", "null", '"x"', "[]", 1_767_225_702);
      insert.run("tool", "tool row", "{oops", "{bad", null, null, 1_767_225_703);
    });
    clock.set(1_767_226_000);
    await store.appendMessage({
      sessionId: "s1",
      role: "assistant",
      content: "last",
      toolCalls: [{ id: "ok" }],
    });

    const rows = await store.getMessages("s1");
    expect(rows.map((r) => r.content)).toEqual([
      "first",
      "bad json",
      "empty texts",
      "scalars",
      "tool row",
      "last",
    ]);
    expect(rows[1]).toMatchObject({
      tool_calls: [],
      // Only tool_calls is parsed here; the rest is the stored text, whatever it is.
      reasoning_details: "{bad",
      codex_reasoning_items: "[1,",
      codex_message_items: "nope",
    });
    expect(rows[2]?.tool_calls).toBeNull();
    expect(rows[3]?.tool_calls).toBe(7);
    expect(rows[4]?.tool_calls).toEqual([]);
    expect(rows[5]?.tool_calls).toEqual([{ id: "ok" }]);

    const conv = await store.getMessagesAsConversation("s1");
    expect(conv).toStrictEqual([
      { role: "user", content: "first" },
      {
        role: "assistant",
        content: "bad json",
        tool_calls: [],
        reasoning_details: null,
        codex_reasoning_items: null,
        codex_message_items: null,
      },
      // Empty texts are falsy: no keys at all.
      { role: "assistant", content: "empty texts" },
      {
        role: "assistant",
        content: "scalars",
        tool_calls: 7,
        reasoning_details: null,
        codex_reasoning_items: "x",
        codex_message_items: [],
      },
      { role: "tool", content: "tool row", tool_calls: [] },
      { role: "assistant", content: "last", tool_calls: [{ id: "ok" }] },
    ]);
    const exported = await store.exportSession("s1");
    expect(exported?.messages.length).toBe(6);
    expect((await store.exportAll())[0]?.messages[1]?.tool_calls).toEqual([]);
  });

  it("reads the NaN and Infinity that Python's json.dumps writes, as json.loads would", async () => {
    const path = join(tempDir(), "state.db");
    const store = await open(path);
    await store.createSession({ id: "s1", source: "cli" });
    const pythonText = '[{"x": NaN, "y": -Infinity, "z": [Infinity], "s": "NaN, \\"Infinity\\""}]';
    raw(path, (db) => {
      db.prepare(
        `INSERT INTO messages (session_id, role, tool_calls, reasoning_details, timestamp)
         VALUES ('s1', 'assistant', ?, ?, 1)`,
      ).run(pythonText, "[NaN]");
      // Still invalid for Python too: a glued token, a signed NaN.
      db.prepare(
        `INSERT INTO messages (session_id, role, tool_calls, reasoning_details, timestamp)
         VALUES ('s1', 'assistant', '[NaNa]', '[-NaN]', 2)`,
      ).run();
    });
    const expected = [
      { x: Number.NaN, y: Number.NEGATIVE_INFINITY, z: [Number.POSITIVE_INFINITY], s: 'NaN, "Infinity"' },
    ];
    const rows = await store.getMessages("s1");
    expect(rows[0]?.tool_calls).toEqual(expected);
    expect(rows[1]?.tool_calls).toEqual([]);
    const conv = await store.getMessagesAsConversation("s1");
    expect(conv[0]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: expected,
      reasoning_details: [Number.NaN],
    });
    expect(conv[1]).toEqual({ role: "assistant", content: null, tool_calls: [], reasoning_details: null });
  });

  it("stops the ancestor walk at a parent cycle", async () => {
    const path = join(tempDir(), "state.db");
    const store = await open(path);
    await store.createSession({ id: "a", source: "cli" });
    await store.createSession({ id: "b", source: "cli", parentSessionId: "a" });
    await store.createSession({ id: "c", source: "cli", parentSessionId: "b" });
    for (const id of ["a", "b", "c"]) await store.appendMessage({ sessionId: id, role: "user", content: id });
    raw(path, (db) => {
      db.prepare("UPDATE sessions SET parent_session_id = 'c' WHERE id = 'a'").run();
    });
    const conv = await store.getMessagesAsConversation("c", { includeAncestors: true });
    expect(conv.map((m) => m.content)).toEqual(["a", "b", "c"]);
    // A parent id that names no session ends the chain there.
    raw(path, (db) => {
      db.pragma("foreign_keys = OFF");
      db.prepare("UPDATE sessions SET parent_session_id = 'gone' WHERE id = 'b'").run();
    });
    expect(
      (await store.getMessagesAsConversation("c", { includeAncestors: true })).map((m) => m.content),
    ).toEqual(["b", "c"]);
  });
});

describe("messages on SQLite: files the store writes stay sound", () => {
  it("passes integrity_check and both FTS integrity checks after every kind of write", async () => {
    const path = join(tempDir(), "state.db");
    const clock = manualClock();
    const store = await open(path, clock);
    for (let s = 0; s < 12; s++) {
      const id = `s${s}`;
      await store.createSession({
        id,
        source: s % 2 ? "cli" : "telegram",
        ...(s > 0 ? { parentSessionId: `s${s - 1}` } : {}),
      });
      for (let m = 0; m < 25; m++) {
        await store.appendMessage({
          sessionId: id,
          role: m % 3 === 0 ? "user" : m % 3 === 1 ? "assistant" : "tool",
          content: m % 5 === 0 ? null : `message ${m} of ${id}: 记忆断裂 docker-build ${"x".repeat(m * 10)}`,
          toolCalls:
            m % 3 === 1 ? [{ id: `c${m}`, function: { name: "search_files", arguments: "{}" } }] : null,
          toolName: m % 3 === 2 ? "search_files" : null,
        });
      }
      if (s % 3 === 0) await store.endSession(id, "user_exit");
    }
    await store.clearMessages("s4");
    await store.deleteSession("s5");
    clock.advance(200 * 86_400);
    expect(await store.pruneSessions()).toBe(4); // the ended ones: s0, s3, s6, s9
    await store.vacuum();
    await store.appendMessage({ sessionId: "s11", role: "user", content: "after vacuum" });
    checkIntegrity(path);
    await store.close();
    checkIntegrity(path);
    raw(path, (db) => {
      const n = db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number };
      // Every row is findable through both indexes (content-less rows included in the count).
      const fts = db
        .prepare("SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH 'docker'")
        .get() as {
        n: number;
      };
      const withText = db
        .prepare("SELECT count(*) AS n FROM messages WHERE content LIKE '%docker-build%'")
        .get() as { n: number };
      expect(fts.n).toBe(withText.n);
      expect(n.n).toBeGreaterThan(0);
    });
  });

  it("vacuum gives freed pages back and leaves the WAL empty", async () => {
    const path = join(tempDir(), "state.db");
    const store = await open(path);
    await store.createSession({ id: "big", source: "cli" });
    await store.createSession({ id: "keep", source: "cli" });
    for (let i = 0; i < 200; i++) {
      await store.appendMessage({
        sessionId: "big",
        role: "user",
        content: `${i} ${"lorem ipsum ".repeat(400)}`,
      });
    }
    await store.appendMessage({ sessionId: "keep", role: "user", content: "small" });
    await store.deleteSession("big");
    let freed = 0;
    let pageSize = 0;
    raw(path, (db) => {
      db.pragma("wal_checkpoint(TRUNCATE)");
      freed = db.pragma("freelist_count", { simple: true }) as number;
      pageSize = db.pragma("page_size", { simple: true }) as number;
    });
    const before = statSync(path).size;
    expect(freed).toBeGreaterThan(100);
    await store.vacuum();
    raw(path, (db) => {
      expect(db.pragma("freelist_count", { simple: true })).toBe(0);
    });
    // The free pages are gone from the file (the FTS indexes keep their delete markers until
    // their segments merge, so the file does not shrink back to its "small" size).
    expect(statSync(path).size).toBeLessThanOrEqual(before - freed * pageSize);
    expect(statSync(`${path}-wal`).size).toBe(0);
    expect((await store.getMessages("keep")).map((m) => m.content)).toEqual(["small"]);
    checkIntegrity(path);
  });
});

describe("retention on SQLite: another process holds the lock", () => {
  it("vacuum waits on timers while another process writes, then runs", async () => {
    const path = join(tempDir(), "state.db");
    const store = await open(path);
    await store.createSession({ id: "s1", source: "cli" });
    await store.appendMessage({ sessionId: "s1", role: "user", content: "mine" });
    const holder = startChild("lock-holder.mjs", [path, "2000", "commit", "3"]);
    await holder.waitForLine("locked");
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
      await store.vacuum();
    } finally {
      clearInterval(timer);
    }
    // The event loop kept running while VACUUM waited for the lock (no blocking busy handler).
    expect(ticks).toBeGreaterThan(5);
    expect((await holder.exited).code).toBe(0);
    // The other process's transaction committed before the VACUUM, and both survive it.
    expect(await store.messageCount()).toBe(4);
    await store.close();
    checkIntegrity(path);
  });

  it("vacuum gives up with STORE_BUSY past the write deadline, and the store keeps working", async () => {
    const path = join(tempDir(), "state.db");
    const store = await openSessionStore({ path, writeDeadlineMs: 300 });
    opened.push(store);
    await store.createSession({ id: "s1", source: "cli" });
    const holder = startChild("lock-holder.mjs", [path, "0", "hang", "1"]);
    try {
      await holder.waitForLine("locked");
      const error = await store.vacuum().then(
        () => null,
        (e: unknown) => e as { code?: string },
      );
      expect(error?.code).toBe("STORE_BUSY");
    } finally {
      holder.process.kill("SIGKILL");
      await holder.exited;
    }
    await store.appendMessage({ sessionId: "s1", role: "user", content: "after" });
    await store.vacuum();
    expect((await store.getMessages("s1")).map((m) => m.content)).toEqual(["after"]);
  });

  it("maybeAutoPruneAndVacuum returns a prune blocked past the deadline as an error, records nothing", async () => {
    const path = join(tempDir(), "state.db");
    const clock = manualClock(1_767_225_600);
    const store = await openSessionStore({ path, writeDeadlineMs: 300, clock });
    opened.push(store);
    await store.createSession({ id: "old", source: "cli" });
    await store.endSession("old", "user_exit");
    clock.advance(100 * 86_400);
    const holder = startChild("lock-holder.mjs", [path, "0", "hang", "0"]);
    await holder.waitForLine("locked");
    // A writer that never lets go: the prune times out, which comes back as an error, not a throw.
    const blocked = await store.maybeAutoPruneAndVacuum();
    expect(blocked).toMatchObject({ skipped: false, pruned: 0, vacuumed: false, error: expect.any(String) });
    expect(await store.getMeta("last_auto_prune")).toBeNull();
    holder.process.kill("SIGKILL");
    await holder.exited;
    expect(await store.maybeAutoPruneAndVacuum()).toStrictEqual({
      skipped: false,
      pruned: 1,
      vacuumed: true,
    });
  });
});

describe("messages on SQLite: a copy of the reference's sample file", () => {
  const CLI1 = "20260101_090000_cli001";
  const CLI2 = "20260101_093000_cli002";

  it("replays a compressed session with its ancestor as the reference would", async () => {
    const store = await open(copyOfSample());
    expect(await store.getMessagesAsConversation(CLI1)).toStrictEqual([
      { role: "user", content: "How do I fix the docker build? It fails on `pnpm install`." },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "terminal", arguments: '{"cmd": "docker build ."}' },
          },
        ],
        reasoning: "Run the build first to see the error.",
      },
      {
        role: "tool",
        content: "ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with frozen-lockfile",
        tool_call_id: "call_1",
        tool_name: "terminal",
      },
      {
        role: "assistant",
        content: "Your lockfile is out of date: run `pnpm install` locally and commit pnpm-lock.yaml.",
        reasoning_content: "",
        reasoning_details: [{ type: "summary", text: "lockfile" }],
      },
    ]);
    const chain = await store.getMessagesAsConversation(CLI2, { includeAncestors: true });
    expect(chain.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant"]);
    expect(chain[4]?.content).toBe("The build passes now. Can we also cache the pnpm store layer?");
    expect(await store.getMessagesAsConversation(CLI2)).toHaveLength(2);
  });

  it("reads, exports, deletes and prunes the sample sensibly", async () => {
    const path = copyOfSample();
    const clock = manualClock(1_767_268_800 + 3600);
    const store = await open(path, clock);
    const tool = await store.getMessages("20260103_080000_dc0001");
    expect(tool).toHaveLength(90);
    expect(tool.filter((m) => Array.isArray(m.tool_calls) && m.tool_calls.length === 2)).toHaveLength(30);

    const all = await store.exportAll();
    expect(all).toHaveLength(13);
    expect(all.reduce((n, s) => n + s.messages.length, 0)).toBe(109);
    for (let i = 1; i < all.length; i++) {
      expect((all[i - 1] as { last_active: number }).last_active).toBeGreaterThanOrEqual(
        (all[i] as { last_active: number }).last_active,
      );
    }
    expect((await store.exportAll({ source: "cli" })).map((s) => s.id).sort()).toEqual([
      "20260101_090000_cli001",
      "20260101_093000_cli002",
      "20260104_100000_cli003",
      "20260104_100500_cli004",
      "20260105_090000_cli005",
      "20260105_090100_cli006",
    ]);

    // The sample recorded an auto-prune at its first session's start; one hour later: skipped.
    clock.set(1_767_225_600 + 3600);
    expect(await store.maybeAutoPruneAndVacuum()).toStrictEqual({
      skipped: true,
      pruned: 0,
      vacuumed: false,
    });

    expect(await store.deleteSession(CLI1)).toBe(true);
    expect(await store.getSession(CLI2)).toMatchObject({
      parent_session_id: null,
      title: "Fix Docker Build #2",
    });

    // 100 days on: the ended sessions go (cli002, cli003), the active ones stay, cli004 is orphaned.
    clock.set(1_767_268_800 + 100 * 86_400);
    const result = await store.maybeAutoPruneAndVacuum();
    expect(result).toStrictEqual({ skipped: false, pruned: 2, vacuumed: true });
    expect(await store.getSession("20260104_100500_cli004")).toMatchObject({ parent_session_id: null });
    expect(await store.sessionCount()).toBe(10);
    expect(await store.messageCount()).toBe(109 - 4 - 2 - 1);
    await store.close();
    checkIntegrity(path);
  });
});
