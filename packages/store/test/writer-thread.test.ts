import { readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { manualClock, rejection } from "@hermes/conformance";
import {
  HermesStoreError,
  type OpenSessionStoreOptions,
  openSessionStore,
  type PortableSession,
  type SearchIndexProgress,
  type SessionStore,
  writeJsonl,
} from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "./helpers/temp-dir.js";
import { threadCount } from "./helpers/thread-count.js";

// `writer: "thread"`: every write of the store runs on its writer thread (writer-worker.ts),
// with the same functions as on the caller's thread. The contract, group-commit, contention,
// shared-commit, damaged-file, change-feed and short-CJK build suites run in this mode too
// (parametrized there); this file covers what only this mode has: where the writes run, values
// that cannot cross a thread, and the writer thread's own end.

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function open(options: OpenSessionStoreOptions = {}): Promise<SessionStore> {
  const store = await openSessionStore({
    path: join(tempDir("hermes-writer-"), "state.db"),
    writer: "thread",
    ...options,
  });
  opened.push(store);
  return store;
}

describe("writer thread: where the writes run", () => {
  it("the writer thread commits every write; the caller's side has no write path of its own", async () => {
    const store = await open();
    expect(store.writerThread?.alive).toBe(true);
    await store.createSession({ id: "s", source: "cli" });
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store.appendMessage({ sessionId: "s", role: "user", content: `m${i}` }),
      ),
    );
    await store.setSessionTitle("s", "Title");
    expect(store.stats().writes).toBe(12);
    expect(store.writerThread?.stats.writes).toBe(12);
    expect(await store.getSession("s")).toMatchObject({ title: "Title", message_count: 10 });
  });

  it("read-your-writes: once a write resolved, reads through a worker and on this thread see it", async () => {
    for (const readers of [2, 0]) {
      const store = await open({ readers, warmReaders: true });
      expect(store.readPool?.readyWorkers ?? 0).toBe(readers);
      await store.createSession({ id: "s", source: "cli" });
      const appender = async (a: number) => {
        for (let i = 0; i < 25; i++) {
          const id = await store.appendMessage({ sessionId: "s", role: "user", content: `a${a} w${i} 读写` });
          const rows = await store.getMessages("s");
          expect(rows.some((r) => r.id === id)).toBe(true);
          expect(await store.messageCount({ sessionId: "s" })).toBeGreaterThanOrEqual(rows.length);
        }
      };
      await Promise.all([appender(0), appender(1), appender(2)]);
      // A search of a short CJK term right after the last append: its index caught up in the writer.
      const last = await store.appendMessage({ sessionId: "s", role: "user", content: "最后 一条" });
      expect((await store.searchMessages("最后")).map((h) => h.id)).toEqual([last]);
      expect((await store.searchMessages("读写", { limit: 100 })).length).toBe(75);
      if (readers > 0) expect(store.readPool?.served).toBeGreaterThan(0);
    }
  });

  it("typed errors cross the thread with their code and fields; a failed write leaves nothing", async () => {
    const store = await open();
    await store.createSession({ id: "s", source: "cli" });
    await store.createSession({ id: "t", source: "cli" });
    const missing = await rejection(store.appendMessage({ sessionId: "ghost", role: "user", content: "x" }));
    expect(missing).toBeInstanceOf(HermesStoreError);
    expect(missing.code).toBe("SESSION_NOT_FOUND");
    await store.setSessionTitle("s", "Taken");
    const conflict = await rejection(store.setSessionTitle("t", "Taken"));
    expect(conflict).toMatchObject({ code: "TITLE_CONFLICT", title: "Taken", sessionId: "s" });
    expect((await rejection(store.appendMessage({ sessionId: "s", role: "", content: "x" }))).code).toBe(
      "INVALID_ARGUMENT",
    );
    // Arguments a thread cannot take (a function inside) are refused, typed, before anything is written.
    const uncloneable = await rejection(
      store.createSession({ id: "u", source: "cli", modelConfig: { f: () => 1 } as never }),
    );
    expect(uncloneable.code).toBe("INVALID_ARGUMENT");
    expect(await store.getSession("u")).toBeNull();
    // Counted as in-thread: the two that failed in their transaction, not those refused before it.
    expect(store.stats().failedWrites).toBe(2);
    expect(await store.messageCount()).toBe(0);
  });

  it("rejects a writer mode it does not know and a clock that is not a function", async () => {
    const path = join(tempDir(), "state.db");
    expect((await rejection(openSessionStore({ path, writer: "worker" as never }))).code).toBe(
      "INVALID_ARGUMENT",
    );
    expect((await rejection(openSessionStore({ path, writer: "thread", clock: 5 as never }))).code).toBe(
      "INVALID_ARGUMENT",
    );
    // A read-only store writes nothing: it has no writer thread.
    const writable = await open({ path });
    const readOnly = await openSessionStore({ path: writable.path, readOnly: true, writer: "thread" });
    expect(readOnly.writerThread).toBeUndefined();
    await readOnly.close();
  });
});

describe("writer thread: values that stay on the caller's side", () => {
  it("a custom clock is read on the caller's thread for every timestamp, in order", async () => {
    const clock = manualClock(1_767_225_600);
    const store = await open({ clock });
    await store.createSession({ id: "s", source: "cli" });
    expect((await store.getSession("s"))?.started_at).toBeCloseTo(1_767_225_600.001, 6);
    clock.advance(60);
    await store.appendMessages([1, 2, 3].map((i) => ({ sessionId: "s", role: "user", content: `m${i}` })));
    const stamps = (await store.getMessages("s")).map((m) => m.timestamp);
    // One reading per message (the clock ticks 1 ms per reading), taken in the writer's transaction.
    expect(stamps.map((t) => Math.round((t - 1_767_225_660) * 1000))).toEqual([2, 3, 4]);
  });

  it("a clock that throws fails the write that read it, and the store writes on afterwards", async () => {
    let broken = false;
    const store = await open({
      clock: () => {
        if (broken) throw new Error("clock broke");
        return 1_800_000_000;
      },
    });
    await store.createSession({ id: "s", source: "cli" });
    broken = true;
    await expect(store.appendMessage({ sessionId: "s", role: "user", content: "lost" })).rejects.toThrow(
      /clock/,
    );
    broken = false;
    await store.appendMessage({ sessionId: "s", role: "user", content: "kept" });
    expect((await store.getMessages("s")).map((m) => m.content)).toEqual(["kept"]);
  });

  it("rebuildSearchIndex's onProgress is called on the caller's thread with the writer's reports", async () => {
    const reports: SearchIndexProgress[][] = [];
    for (const writer of ["inline", "thread"] as const) {
      const store = await open({ writer });
      await store.createSession({ id: "s", source: "cli" });
      await store.appendMessages(
        Array.from({ length: 50 }, (_, i) => ({ sessionId: "s", role: "user", content: `hello ${i} 你好` })),
      );
      const progress: SearchIndexProgress[] = [];
      await store.rebuildSearchIndex({ onProgress: (p) => progress.push(p) });
      reports.push(progress);
    }
    expect(reports[1]).toEqual(reports[0]);
    expect(reports[1]?.length).toBeGreaterThan(0);
  });

  it("imports an async iterable unit by unit through the writer, and a JSONL file in the writer", async () => {
    // The source: sessions as another store exports them (every fifth one a child of the one before).
    const source = await openSessionStore({
      path: join(tempDir(), "source.db"),
      synchronous: "OFF",
      readers: 0,
    });
    for (let i = 0; i < 455; i++) {
      await source.createSession({
        id: `s${i}`,
        source: "import",
        ...(i % 5 === 4 ? { parentSessionId: `s${i - 1}` } : {}),
      });
      await source.appendMessage({ sessionId: `s${i}`, role: "user", content: `imported ${i}` });
    }
    const exported: PortableSession[] = [];
    for await (const s of source.exportStream()) exported.push(s);
    await source.close();
    exported.sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1)));
    const store = await open();
    // More than one unit (200 sessions each): the iterable is read here, each unit written there.
    async function* first450() {
      for (const s of exported.slice(0, 450)) yield s;
    }
    const before = store.stats().writes;
    const report = await store.importSessions(first450());
    expect(report).toMatchObject({ sessionsImported: 450, messagesImported: 450, invalid: [] });
    expect(store.stats().writes - before).toBe(3);
    const file = join(tempDir(), "sessions.jsonl");
    await writeJsonl(exported.slice(450), file);
    expect(await store.importSessions(file)).toMatchObject({ sessionsImported: 5, messagesImported: 5 });
    expect(await store.sessionCount({ source: "import" })).toBe(455);
    expect((await store.getSession("s454"))?.parent_session_id).toBe("s453");
    expect((await store.getMessages("s7")).map((m) => m.content)).toEqual(["imported 7"]);
  });
});

describe("writer thread: its end", () => {
  it("a writer thread that dies rejects its pending writes with BACKEND_ERROR; the next write starts another", async () => {
    const store = await open();
    await store.createSession({ id: "s", source: "cli" });
    await store.appendMessage({ sessionId: "s", role: "user", content: "before" });
    const first = store.writerThread;
    // Another connection holds the lock: the writes wait in the writer, on its timers.
    const raw = new Database(store.path);
    raw.exec("BEGIN IMMEDIATE");
    const pending = Array.from({ length: 5 }, (_, i) =>
      store.appendMessage({ sessionId: "s", role: "user", content: `pending ${i}` }).then(
        () => "resolved",
        (error: HermesStoreError) => error,
      ),
    );
    await new Promise((r) => setTimeout(r, 100));
    await first?.worker?.terminate();
    const outcomes = await Promise.all(pending);
    for (const outcome of outcomes) {
      expect(outcome).toBeInstanceOf(HermesStoreError);
      expect((outcome as HermesStoreError).code).toBe("BACKEND_ERROR");
    }
    raw.exec("ROLLBACK");
    raw.close();
    await store.appendMessage({ sessionId: "s", role: "user", content: "after" });
    expect(store.writerThread).not.toBe(first);
    expect(store.writerThread?.alive).toBe(true);
    // A pending append may have been posted for another writer to commit (shared commits) before
    // the thread died: the next holder of the lock commits it, once. So, as the error says, each
    // pending write is in the file at most once, and nothing else is.
    const contents = (await store.getMessages("s")).map((m) => m.content as string);
    expect(contents.slice(0, 2)).toEqual(["before", "after"]);
    const landed = contents.slice(2);
    expect(new Set(landed).size).toBe(landed.length);
    for (const content of landed) expect(content).toMatch(/^pending \d$/);
    expect((await store.getSession("s"))?.message_count).toBe(contents.length);
    // The counters go on from the first thread's (its own writes; a posted one another committed is not its).
    expect(store.stats().writes).toBe(3);
    const db = new Database(store.path, { readonly: true });
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    db.close();
  });
});

/** The files of `dir` this process holds open (by its descriptors in /proc). */
function openFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) out.push(target);
    } catch {
      // closed meanwhile (the listing's own descriptor)
    }
  }
  return out;
}

describe("writer thread: the files it leaves", () => {
  it.runIf(process.platform === "linux")(
    "a killed writer thread and read worker leave no descriptor open once the store is closed",
    async () => {
      const dir = tempDir("hermes-writer-fds-");
      const store = await open({ path: join(dir, "state.db"), readers: 1, warmReaders: true });
      await store.createSession({ id: "s", source: "cli" });
      await store.appendMessage({ sessionId: "s", role: "user", content: "before" });
      // The writer thread holds the writers' queue open with raw descriptors (the check sees them);
      // Node closes a thread's descriptors when it ends (trackUnmanagedFds), SQLite's with it.
      expect(openFilesUnder(dir).filter((f) => f.includes("state.db-writers/"))).not.toEqual([]);
      await store.writerThread?.worker?.terminate();
      await store.readPool?.workerAt(0)?.terminate();
      await store.appendMessage({ sessionId: "s", role: "user", content: "after" });
      expect(await store.messageCount({ sessionId: "s" })).toBe(2);
      await store.close();
      expect(openFilesUnder(dir)).toEqual([]);
    },
  );
});

describe('writer: "auto"', () => {
  it("a store that only writes keeps its writes on the caller's thread, however many", async () => {
    const store = await open({ writer: "auto", readers: 0 });
    await store.createSession({ id: "s", source: "cli" });
    for (let i = 0; i < 30; i++)
      await store.appendMessage({ sessionId: "s", role: "user", content: `m${i}` });
    expect(store.writerThread).toBeUndefined();
    expect(store.stats().groupsCommitted).toBe(31);
  });

  it("with reads in its pool: writes run here until 8 transactions committed; then the writer thread takes over, in call order, nothing lost", async () => {
    const store = await open({ writer: "auto", readers: 1, warmReaders: true });
    await store.createSession({ id: "s", source: "cli" });
    for (let i = 0; i < 6; i++)
      await store.appendMessage({ sessionId: "s", role: "user", content: `here ${i}` });
    expect(store.writerThread).toBeUndefined();
    expect(store.stats().groupsCommitted).toBe(7);
    // Callers that keep writing while the thread starts and takes over: each one's writes in order.
    const callers = Array.from({ length: 4 }, async (_, c) => {
      const ids: number[] = [];
      for (let i = 0; i < 40; i++) {
        ids.push(await store.appendMessage({ sessionId: "s", role: "user", content: `c${c} ${i}` }));
        if (i % 10 === 0) await sleep(20);
      }
      return ids;
    });
    const ids = await Promise.all(callers);
    for (const deadline = Date.now() + 30_000; store.writerThread === undefined && Date.now() < deadline; )
      await sleep(10);
    expect(store.writerThread?.alive).toBe(true);
    await store.appendMessage({ sessionId: "s", role: "user", content: "on the writer" });
    expect(store.writerThread?.stats.writes).toBeGreaterThan(0);
    for (const list of ids) expect([...list].sort((a, b) => a - b)).toEqual(list);
    const rows = await store.getMessages("s");
    expect(rows).toHaveLength(6 + 160 + 1);
    for (let c = 0; c < 4; c++) {
      const mine = rows.filter((r) => String(r.content).startsWith(`c${c} `)).map((r) => r.content);
      expect(mine).toEqual(Array.from({ length: 40 }, (_, i) => `c${c} ${i}`));
    }
    // The counters of both sides add up: every write counted once.
    expect(store.stats().writes).toBe(1 + 6 + 160 + 1);
    expect(store.stats().failedWrites).toBe(0);
  });

  it("a store closed while its writer thread starts leaves no thread behind; its writes are all there", async () => {
    const threadsBefore = threadCount();
    const path = join(tempDir(), "state.db");
    const store = await openSessionStore({ path, writer: "auto", readers: 1, warmReaders: true });
    await store.createSession({ id: "s", source: "cli" });
    for (let i = 0; i < 9; i++) await store.appendMessage({ sessionId: "s", role: "user", content: `m${i}` });
    await store.close(); // the thread was still loading: it is closed, never used
    expect(store.writerThread).toBeUndefined();
    expect(threadCount()).toBe(threadsBefore);
    const again = await openSessionStore({ path, readers: 0 });
    expect(await again.messageCount({ sessionId: "s" })).toBe(9);
    await again.close();
  });
});
