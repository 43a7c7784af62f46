import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  HermesStoreError,
  type OpenSessionStoreOptions,
  openSessionStore,
  type SessionStore,
} from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { startChild } from "./helpers/child-process.js";
import { tempDir } from "./helpers/temp-dir.js";

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function openStore(options: OpenSessionStoreOptions): Promise<SessionStore> {
  const store = await openSessionStore({ path: join(tempDir("hermes-group-"), "state.db"), ...options });
  opened.push(store);
  return store;
}

/** Settles every promise, keeping what each one gave. */
async function settle(promises: Array<Promise<unknown>>) {
  return Promise.allSettled(promises);
}

// The same guarantees whether the writes run on the caller's thread or on the writer thread,
// where the calls one tick made arrive together and are started together.
describe.each(["inline", "thread"] as const)("group commit (writer: %s)", { timeout: 180_000 }, (writer) => {
  const open = (options: OpenSessionStoreOptions = {}) => openStore({ writer, ...options });
  it("hundreds of concurrent callers: every row once, per-caller order, counters equal rows", async () => {
    const store = await open();
    const sessions = ["a", "b", "c", "d", "e"];
    for (const id of sessions) await store.createSession({ id, source: "group" });
    const before = store.stats();
    const callers = 300;
    const perCaller = 6;
    await Promise.all(
      Array.from({ length: callers }, async (_, c) => {
        for (let i = 0; i < perCaller; i++) {
          await store.appendMessage({
            sessionId: sessions[c % sessions.length] as string,
            role: "user",
            content: `caller ${c} write ${i}`,
          });
        }
      }),
    );
    const stats = store.stats();
    const total = callers * perCaller;
    expect(stats.writes - before.writes).toBe(total);
    expect(stats.failedWrites).toBe(0);
    // Writes really shared transactions (and a group never exceeds the default bound, 64).
    expect(stats.groupsCommitted - before.groupsCommitted).toBeLessThan(total / 4);
    expect(stats.writesPerGroupMax).toBeGreaterThan(1);
    expect(stats.writesPerGroupMax).toBeLessThanOrEqual(64);
    expect(stats.writesPerGroupMean).toBeCloseTo(stats.writes / stats.groupsCommitted, 9);

    expect(await store.messageCount()).toBe(total);
    for (const id of sessions) {
      const rows = await store.getMessages(id);
      expect((await store.getSession(id))?.message_count).toBe(rows.length);
      // Per caller: each write exactly once, in call order (ids grow with commit order).
      const byCaller = new Map<string, number[]>();
      for (const row of [...rows].sort((x, y) => x.id - y.id)) {
        const [, caller, , write] = String(row.content).split(" ");
        const seen = byCaller.get(caller as string) ?? [];
        seen.push(Number(write));
        byCaller.set(caller as string, seen);
      }
      for (const writes of byCaller.values()) expect(writes).toEqual([0, 1, 2, 3, 4, 5]);
    }
  });

  it("a lone write commits at once, in its own transaction", async () => {
    const store = await open();
    await store.createSession({ id: "s", source: "group" });
    const before = store.stats();
    await store.appendMessage({ sessionId: "s", role: "user", content: "alone" });
    const after = store.stats();
    expect(after.groupsCommitted - before.groupsCommitted).toBe(1);
    expect(after.writes - before.writes).toBe(1);
    expect(after.retries).toBe(0);
  });

  it("a failing write inside a group rejects only itself; the rest commit", async () => {
    const store = await open();
    await store.createSession({ id: "s", source: "group" });
    await store.createSession({ id: "t", source: "group" });
    const before = store.stats();
    // Calls made in one tick while the queue is busy (or right after the first commits alone)
    // are committed together.
    const first = store.appendMessage({ sessionId: "s", role: "user", content: "first" });
    const group: Array<Promise<unknown>> = [
      store.appendMessage({ sessionId: "s", role: "user", content: "g0" }),
      store.setSessionTitle("s", "Shared title"),
      store.appendMessage({ sessionId: "missing", role: "user", content: "g1 lost" }),
      store.appendMessage({ sessionId: "s", role: "assistant", content: "g2" }),
      store.setSessionTitle("t", "Shared title"), // conflicts with the write above, same group
      store.appendMessages([
        { sessionId: "t", role: "user", content: "g3 batch" },
        { sessionId: "nope", role: "user", content: "g3 batch lost" },
      ]),
      store.updateTokenCounts("s", { inputTokens: 7 }),
      store.appendMessage({ sessionId: "t", role: "user", content: "g4" }),
    ];
    const results = await settle([first, ...group]);
    const after = store.stats();
    expect(after.groupsCommitted - before.groupsCommitted).toBeLessThanOrEqual(2);
    expect(after.writesPerGroupMax).toBeGreaterThanOrEqual(5);

    const [r0, g0, title1, lost, g2, title2, batch, tokens, g4] = results;
    for (const ok of [r0, g0, title1, g2, tokens, g4]) expect(ok?.status).toBe("fulfilled");
    const reason = (r: PromiseSettledResult<unknown> | undefined) =>
      r?.status === "rejected" ? (r.reason as HermesStoreError) : undefined;
    expect(reason(lost)).toBeInstanceOf(HermesStoreError);
    expect(reason(lost)?.code).toBe("SESSION_NOT_FOUND");
    expect(reason(title2)?.code).toBe("TITLE_CONFLICT");
    expect(reason(batch)?.code).toBe("SESSION_NOT_FOUND");
    expect(after.failedWrites - before.failedWrites).toBe(3);

    expect((await store.getMessages("s")).map((m) => m.content)).toEqual(["first", "g0", "g2"]);
    expect((await store.getMessages("t")).map((m) => m.content)).toEqual(["g4"]);
    const s = await store.getSession("s");
    const t = await store.getSession("t");
    expect(s).toMatchObject({ title: "Shared title", message_count: 3, input_tokens: 7 });
    expect(t).toMatchObject({ title: null, message_count: 1 });
  });

  it("appends of a group share one statement; a failing one still rejects alone, and both FTS indexes hold exactly the committed rows", async () => {
    const store = await open();
    await store.createSession({ id: "s", source: "group" });
    await store.createSession({ id: "t", source: "group" });
    const inputs = [
      { sessionId: "s", role: "user", content: "zebracorn one" },
      { sessionId: "t", role: "assistant", content: "zebracorn two", toolCalls: [{ id: "a" }, { id: "b" }] },
      { sessionId: "ghost", role: "user", content: "zebracorn lost quagmire 迷宮入口" },
      { sessionId: "s", role: "tool", content: "zebracorn three", toolCallId: "a" },
      { sessionId: "t", role: "user", content: "zebracorn four 記憶體" },
    ];
    // Round 1 has an unknown session in the middle (the merged statement fails and the appends
    // run one by one); round 2 is all valid (the merged statement commits). The first call of
    // each round commits alone; the others form one group behind it.
    const rounds = [inputs, inputs.filter((m) => m.sessionId !== "ghost")];
    const committed: Array<{ id: number; content: string }> = [];
    for (const round of rounds) {
      const results = await settle([
        store.appendMessage({ sessionId: "s", role: "user", content: "opening line" }),
        ...round.map((m) => store.appendMessage(m)),
      ]);
      const contents = ["opening line", ...round.map((m) => m.content)];
      results.forEach((r, i) => {
        if (contents[i]?.includes("lost")) {
          expect(r.status).toBe("rejected");
          expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "SESSION_NOT_FOUND" });
        } else {
          expect(r.status).toBe("fulfilled");
          committed.push({ id: (r as PromiseFulfilledResult<number>).value, content: contents[i] as string });
        }
      });
    }
    // Each promise resolved with its own row's id, ids growing in call order.
    const ids = committed.map((c) => c.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    const rows = [...(await store.getMessages("s")), ...(await store.getMessages("t"))];
    expect(rows).toHaveLength(committed.length);
    for (const c of committed) expect(rows.find((r) => r.id === c.id)?.content).toBe(c.content);
    expect(await store.getSession("s")).toMatchObject({ message_count: 6, tool_call_count: 0 });
    expect(await store.getSession("t")).toMatchObject({ message_count: 4, tool_call_count: 4 });
    expect(store.stats().failedWrites).toBe(1);

    const zebra = committed.filter((c) => c.content.startsWith("zebracorn")).map((c) => c.id);
    expect(zebra).toHaveLength(8);
    const hits = await store.searchMessages("zebracorn", { limit: 50 });
    expect(hits.map((h) => h.id).sort((a, b) => a - b)).toEqual(zebra);
    expect(await store.searchMessages("quagmire")).toEqual([]);
    const db = new Database(store.path, { readonly: true });
    try {
      const match = (table: string, query: string) =>
        (
          db.prepare(`SELECT rowid FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid`).all(query) as Array<{
            rowid: number;
          }>
        ).map((r) => r.rowid);
      expect(match("messages_fts", "zebracorn")).toEqual(zebra);
      expect(match("messages_fts", "quagmire")).toEqual([]);
      expect(match("messages_fts_trigram", "記憶體")).toEqual(
        committed.filter((c) => c.content.includes("記憶體")).map((c) => c.id),
      );
      expect(match("messages_fts_trigram", "迷宮入")).toEqual([]);
      expect(match("messages_fts_trigram", "racorn")).toEqual(zebra);
    } finally {
      db.close();
    }
    // The indexes agree with the messages table (FTS5's own check for external-content tables).
    await store.close();
    const rw = new Database(store.path);
    try {
      for (const table of ["messages_fts", "messages_fts_trigram"]) {
        expect(() =>
          rw.prepare(`INSERT INTO ${table}(${table}) VALUES('integrity-check')`).run(),
        ).not.toThrow();
      }
    } finally {
      rw.close();
    }
  });

  it("appendMessages writes a turn all or none, in order", async () => {
    const store = await open();
    await store.createSession({ id: "s", source: "group" });
    const ids = await store.appendMessages([
      { sessionId: "s", role: "user", content: "question" },
      { sessionId: "s", role: "assistant", content: null, toolCalls: [{ id: "c1" }, { id: "c2" }] },
      { sessionId: "s", role: "tool", content: "result", toolCallId: "c1" },
      { sessionId: "s", role: "assistant", content: "answer" },
    ]);
    expect(ids).toHaveLength(4);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect((await store.getMessages("s")).map((m) => m.id)).toEqual(ids);
    expect(await store.getSession("s")).toMatchObject({ message_count: 4, tool_call_count: 2 });

    // An unknown session in the middle: nothing of the batch is written.
    await expect(
      store.appendMessages([
        { sessionId: "s", role: "user", content: "kept?" },
        { sessionId: "ghost", role: "user", content: "no" },
      ]),
    ).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    // An invalid message: rejected before anything is queued.
    await expect(
      store.appendMessages([
        { sessionId: "s", role: "user", content: "kept?" },
        { sessionId: "s", role: "", content: "bad role" },
      ]),
    ).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(store.appendMessages("nope" as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    // One batch holds the file's write lock: an abusive size is refused up front.
    const huge = Array.from({ length: 10_001 }, () => ({ sessionId: "s", role: "user", content: "x" }));
    await expect(store.appendMessages(huge)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(await store.appendMessages([])).toEqual([]);
    expect(await store.messageCount({ sessionId: "s" })).toBe(4);
    expect(await store.getSession("s")).toMatchObject({ message_count: 4, tool_call_count: 2 });
  });

  it("maxGroupSize bounds a group; maxGroupSize 1 gives one transaction per write", async () => {
    for (const maxGroupSize of [1, 4]) {
      const store = await open({ maxGroupSize });
      await store.createSession({ id: "s", source: "group" });
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          store.appendMessage({ sessionId: "s", role: "user", content: `${i}` }),
        ),
      );
      const stats = store.stats();
      expect(stats.writesPerGroupMax).toBe(maxGroupSize);
      expect(await store.messageCount()).toBe(40);
    }
    await expect(open({ maxGroupSize: 0 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  it("a group waits for another process's lock as one unit; STORE_BUSY rejects all of it, writing none", async () => {
    const store = await open({ writeDeadlineMs: 700 });
    await store.createSession({ id: "s", source: "group" });
    const holder = startChild("lock-holder.mjs", [store.path, "2500", "commit"]);
    await holder.waitForLine("locked");
    const writes = Array.from({ length: 12 }, (_, i) =>
      store.appendMessage({ sessionId: "s", role: "user", content: `busy ${i}` }),
    );
    const results = await settle(writes);
    for (const r of results) {
      expect(r.status).toBe("rejected");
      const error = (r as PromiseRejectedResult).reason as HermesStoreError & {
        attempts: number;
        waitedMs: number;
      };
      expect(error.code).toBe("STORE_BUSY");
      expect(error.attempts).toBeGreaterThan(1);
      expect(error.waitedMs).toBeGreaterThanOrEqual(700);
    }
    expect(store.stats().busyTimeouts).toBe(12);
    await holder.exited;
    expect(await store.messageCount({ sessionId: "s" })).toBe(0);
    expect((await store.getSession("s"))?.message_count).toBe(0);
    // And the store writes normally once the lock is free.
    await store.appendMessage({ sessionId: "s", role: "user", content: "after" });
    expect(await store.messageCount({ sessionId: "s" })).toBe(1);
  });

  it("SIGKILL while groups commit: each write whole or absent, and every resolved write present", async () => {
    for (let round = 0; round < 3; round++) {
      const dir = tempDir("hermes-group-kill-");
      const path = join(dir, "state.db");
      const side = join(dir, "resolved.txt");
      const child = startChild("group-commit-writer.mjs", [path, side, "48", JSON.stringify({ writer })]);
      await child.waitForLine("ready");
      // Let groups flow, then kill at a moment that varies from round to round.
      for (let waited = 0; waited < 20_000; waited += 20) {
        if (existsSync(side) && readFileSync(side, "utf8").split("\n").length > 150 + round * 100) break;
        await sleep(20);
      }
      await sleep(Math.random() * 50);
      child.process.kill("SIGKILL");
      expect((await child.exited).signal).toBe("SIGKILL");

      const resolved = readFileSync(side, "utf8").split("\n").filter(Boolean);
      expect(resolved.length).toBeGreaterThan(100);
      const db = new Database(path);
      try {
        expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
        const rows = db.prepare("SELECT session_id, content FROM messages ORDER BY id").all() as Array<{
          session_id: string;
          content: string;
        }>;
        // Group rows by write: "c<caller>/w<write>/<part>/<parts>".
        const parts = new Map<string, { have: Set<number>; of: number }>();
        for (const row of rows) {
          const [c, w, part, of] = row.content.split("/");
          const key = `${c}/${w}`;
          const entry = parts.get(key) ?? { have: new Set<number>(), of: Number(of) };
          entry.have.add(Number(part));
          parts.set(key, entry);
        }
        for (const [key, entry] of parts) expect({ key, n: entry.have.size }).toEqual({ key, n: entry.of });
        for (const key of resolved) expect(parts.has(key)).toBe(true);
        // Per caller, the writes present are exactly 0..k: nothing later without everything before.
        const byCaller = new Map<string, number[]>();
        for (const key of parts.keys()) {
          const [c, w] = key.split("/");
          byCaller.set(c as string, [...(byCaller.get(c as string) ?? []), Number((w as string).slice(1))]);
        }
        for (const writes of byCaller.values()) {
          writes.sort((a, b) => a - b);
          expect(writes).toEqual(writes.map((_, i) => i));
        }
        // Counters moved with the rows, in the same transactions.
        const counts = db
          .prepare(
            "SELECT s.id, s.message_count, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS n FROM sessions s",
          )
          .all() as Array<{ id: string; message_count: number; n: number }>;
        for (const c of counts) expect(c.message_count).toBe(c.n);
      } finally {
        db.close();
      }
      // The file opens clean in the store afterwards.
      const store = await openSessionStore({ path });
      await store.appendMessage({ sessionId: "gc-0", role: "user", content: "after/kill/0/1" });
      await store.close();
    }
  });
});
