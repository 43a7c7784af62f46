import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { type RunningChild, startChild } from "./helpers/child-process.js";
import { tempDir } from "./helpers/temp-dir.js";

// Several real processes on one temp file: store writers (test/child/contention-writer.mjs),
// a process that holds the write lock (lock-holder.mjs), and one that writes with the
// reference's SQL only (reference-writer.mjs). The children import the built @hermes/store.

interface WriterResult {
  tag: string;
  appended: number;
  errors: Array<{ code?: string; message: string; attempts?: number; waitedMs?: number }>;
  latenciesMs: number[];
  stats: {
    retries: number;
    busyErrors: number;
    writes: number;
    waitedMs: number;
    sharedWrites: number;
    servedWrites: number;
  };
}

/** A fresh database with the v11 schema, written by the store then closed. */
async function freshDatabase(): Promise<string> {
  const path = join(tempDir("hermes-contention-"), "state.db");
  const store = await openSessionStore({ path });
  await store.close();
  return path;
}

function startWriterProcesses(path: string, n: number, count: number, options: Record<string, unknown> = {}) {
  return Array.from({ length: n }, (_, i) =>
    startChild("contention-writer.mjs", [path, `w${i}`, String(count), JSON.stringify(options)]),
  );
}

async function resultsOf(children: RunningChild[]): Promise<WriterResult[]> {
  const results: WriterResult[] = [];
  for (const child of children) {
    const { code, signal, stderr } = await child.exited;
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
    results.push(child.result<WriterResult>());
  }
  return results;
}

function go(children: RunningChild[]): void {
  for (const child of children) child.process.stdin?.write("go\n");
}

/** What the file holds, read with a plain connection after every process has finished. */
function inspect(path: string, searches: readonly string[] = []) {
  const db = new Database(path);
  try {
    const integrity = db.pragma("integrity_check", { simple: true });
    const rows = db
      .prepare("SELECT session_id, COUNT(*) AS n FROM messages GROUP BY session_id")
      .all() as Array<{ session_id: string; n: number }>;
    const counters = db.prepare("SELECT id, message_count FROM sessions").all() as Array<{
      id: string;
      message_count: number;
    }>;
    const duplicates = db
      .prepare("SELECT COUNT(*) FROM (SELECT content FROM messages GROUP BY content HAVING COUNT(*) > 1)")
      .pluck()
      .get() as number;
    const matchQ = db.prepare("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH ?").pluck();
    // The external-content FTS index must agree with `messages` after every writer.
    db.prepare("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')").run();
    return {
      integrity,
      rows: Object.fromEntries(rows.map((r) => [r.session_id, r.n])),
      counters: Object.fromEntries(counters.map((c) => [c.id, c.message_count])),
      duplicates,
      matches: Object.fromEntries(searches.map((q) => [q, matchQ.get(q) as number])),
    };
  } finally {
    db.close();
  }
}

// Real processes on a shared 2-core machine: generous time limits (speed is the bench's business).
// The key cases run with the writers' writes on the caller's thread and on a writer thread:
// appends from several processes, writers killed while committing for each other, typed
// STORE_BUSY with its fields. The event-loop case at the end is the caller's thread's own.
describe.each(["inline", "thread"] as const)(
  "writes under contention (real processes, writer: %s)",
  { timeout: 180_000 },
  (writer) => {
    const startWriters = (path: string, n: number, count: number, options: Record<string, unknown> = {}) =>
      startWriterProcesses(path, n, count, { ...options, writer });

    // Two processes on a writer thread each; eight on the caller's thread only (the slowest case).
    it.each(writer === "inline" ? [2, 8] : [2])(
      "%i writer processes × 150 appends: every row once, counters right, no error",
      async (n) => {
        const path = await freshDatabase();
        const m = 150;
        const children = startWriters(path, n, m, { waitForGo: true });
        await Promise.all(children.map((c) => c.waitForLine("ready")));
        go(children);
        const results = await resultsOf(children);
        for (const r of results) {
          expect(r.errors).toEqual([]);
          expect(r.appended).toBe(m);
          expect(r.stats.writes).toBe(m + 1); // + ensureSession
        }
        const file = inspect(path, ["contention"]);
        expect(file.integrity).toBe("ok");
        expect(file.duplicates).toBe(0);
        for (let i = 0; i < n; i++) {
          expect(file.rows[`writer-w${i}`]).toBe(m);
          expect(file.counters[`writer-w${i}`]).toBe(m);
        }
        expect(file.matches.contention).toBe(n * m);
        // Every append another process committed for its owner was counted once on each side.
        const sum = (key: "sharedWrites" | "servedWrites") => results.reduce((a, r) => a + r.stats[key], 0);
        expect(sum("sharedWrites")).toBe(sum("servedWrites"));
      },
    );

    it("writers SIGKILLed while committing for each other: every acknowledged append once, none twice", async () => {
      // Killed at arbitrary moments, a writer may be posting, holding claims in its transaction,
      // between its COMMIT and the wake-ups, or waiting for a receipt. The survivors must finish
      // without error, and no append may be lost once acknowledged, or ever written twice.
      const path = await freshDatabase();
      const m = 150;
      const writers = startWriters(path, 6, m, { waitForGo: true, printAcks: true });
      await Promise.all(writers.map((c) => c.waitForLine("ready")));
      go(writers);
      const victims = writers.slice(0, 3);
      const survivors = writers.slice(3);
      for (const [k, victim] of victims.entries()) {
        await victim.waitForLine(`ack ${20 + 25 * k}`);
        await sleep(Math.random() * 3);
        victim.process.kill("SIGKILL");
        expect((await victim.exited).signal).toBe("SIGKILL");
      }
      const results = await resultsOf(survivors);
      for (const r of results) {
        expect(r.errors).toEqual([]);
        expect(r.appended).toBe(m);
      }
      const file = inspect(path);
      expect(file.integrity).toBe("ok");
      expect(file.duplicates).toBe(0);
      for (const r of results) {
        expect(file.rows[`writer-${r.tag}`]).toBe(m);
        expect(file.counters[`writer-${r.tag}`]).toBe(m);
      }
      const db = new Database(path, { readonly: true });
      try {
        const has = db.prepare("SELECT COUNT(*) FROM messages WHERE content = ?").pluck();
        for (const [k, victim] of victims.entries()) {
          const acked = victim.lines
            .filter((line) => line.startsWith("ack "))
            .map((line) => Number(line.slice(4)));
          expect(acked.length).toBeGreaterThanOrEqual(21 + 25 * k);
          for (const i of acked) expect(has.get(`w${k} message ${i} contention`)).toBe(1);
          // At most the append in flight when it died is in too; the counter matches the rows.
          const rows = file.rows[`writer-w${k}`] ?? 0;
          expect(rows - acked.length).toBeGreaterThanOrEqual(0);
          expect(rows - acked.length).toBeLessThanOrEqual(1);
          expect(file.counters[`writer-w${k}`]).toBe(rows);
        }
      } finally {
        db.close();
      }
    });

    it("with a 1 s deadline the writers fail with STORE_BUSY (attempts, waitedMs) and write nothing", async () => {
      const path = await freshDatabase();
      const writers = startWriters(path, 2, 2, { waitForGo: true, writeDeadlineMs: 1000 });
      await Promise.all(writers.map((c) => c.waitForLine("ready")));
      const holder = startChild("lock-holder.mjs", [path, "3500", "commit"]);
      await holder.waitForLine("locked");
      go(writers);
      const results = await resultsOf(writers);
      await holder.exited;
      for (const r of results) {
        expect(r.appended).toBe(0);
        expect(r.errors).toHaveLength(2);
        for (const e of r.errors) {
          expect(e.code).toBe("STORE_BUSY");
          expect(e.attempts).toBeGreaterThan(1);
          expect(e.waitedMs).toBeGreaterThanOrEqual(1000);
        }
      }
      const file = inspect(path);
      expect(file.integrity).toBe("ok");
      expect(file.rows).toEqual({ holder: 3 });
      expect(file.counters).toMatchObject({ holder: 3, "writer-w0": 0, "writer-w1": 0 });
    });
  },
);

// The other cases run with the writes on the caller's thread only: each adds little to the
// writer thread's cases above (the lock waits and typed errors are there; the victim below is
// not a store; the reference's writers race the store as they race any writer).
describe("writes under contention (real processes, writer: inline)", { timeout: 180_000 }, () => {
  const startWriters = (path: string, n: number, count: number, options: Record<string, unknown> = {}) =>
    startWriterProcesses(path, n, count, { ...options, writer: "inline" });

  it("writers wait for a lock held 3 s by another process, then succeed", async () => {
    const path = await freshDatabase();
    const writers = startWriters(path, 3, 5, { waitForGo: true });
    await Promise.all(writers.map((c) => c.waitForLine("ready")));
    const holder = startChild("lock-holder.mjs", [path, "3000", "commit"]);
    await holder.waitForLine("locked");
    go(writers);
    const results = await resultsOf(writers);
    expect((await holder.exited).code).toBe(0);
    for (const r of results) {
      expect(r.errors).toEqual([]);
      expect(r.appended).toBe(5);
      // They really met the lock (and waited on timers between attempts).
      expect(r.stats.busyErrors).toBeGreaterThan(0);
      expect(r.stats.retries).toBeGreaterThan(0);
    }
    const file = inspect(path);
    expect(file.integrity).toBe("ok");
    expect(file.rows).toEqual({ holder: 3, "writer-w0": 5, "writer-w1": 5, "writer-w2": 5 });
    expect(file.counters).toMatchObject({ holder: 3, "writer-w0": 5, "writer-w1": 5, "writer-w2": 5 });
  });

  it("a writer killed with SIGKILL inside its transaction leaves nothing; the others continue", async () => {
    const path = await freshDatabase();
    const writers = startWriters(path, 3, 60, { waitForGo: true });
    await Promise.all(writers.map((c) => c.waitForLine("ready")));
    go(writers);
    const victim = startChild("lock-holder.mjs", [path, "0", "hang", "25"]);
    await victim.waitForLine("locked");
    await sleep(300);
    victim.process.kill("SIGKILL");
    expect((await victim.exited).signal).toBe("SIGKILL");
    const results = await resultsOf(writers);
    for (const r of results) {
      expect(r.errors).toEqual([]);
      expect(r.appended).toBe(60);
    }
    // The file opens clean in the store and can be written again.
    const store = await openSessionStore({ path });
    await store.appendMessage({ sessionId: "writer-w0", role: "user", content: "after the crash" });
    await store.close();
    const file = inspect(path, ["partialtxn"]);
    expect(file.integrity).toBe("ok");
    expect(file.rows.holder).toBeUndefined();
    expect(file.counters.holder).toBe(0);
    expect(file.matches.partialtxn).toBe(0);
    expect(file.rows).toEqual({ "writer-w0": 61, "writer-w1": 60, "writer-w2": 60 });
    expect(file.counters).toMatchObject({ "writer-w0": 61, "writer-w1": 60, "writer-w2": 60 });
  });

  it("a process writing with the reference's SQL alongside the store: both sets intact and searchable", async () => {
    const path = await freshDatabase();
    const m = 120;
    const writers = startWriters(path, 2, m, { waitForGo: true });
    await Promise.all(writers.map((c) => c.waitForLine("ready")));
    const reference = [0, 1].map((i) => startChild("reference-writer.mjs", [path, `r${i}`, String(m)]));
    await Promise.all(reference.map((c) => c.waitForLine("ready")));
    go(writers);
    const results = await resultsOf(writers);
    for (const child of reference) {
      const { code, stderr } = await child.exited;
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
      expect(child.result<{ errors: string[] }>().errors).toEqual([]);
    }
    for (const r of results) expect(r.errors).toEqual([]);
    const file = inspect(path, ["pythonside", "contention"]);
    expect(file.integrity).toBe("ok");
    expect(file.duplicates).toBe(0);
    for (const id of ["writer-w0", "writer-w1", "reference-r0", "reference-r1"]) {
      expect(file.rows[id]).toBe(m);
      expect(file.counters[id]).toBe(m);
    }
    expect(file.matches.pythonside).toBe(2 * m);
    expect(file.matches.contention).toBe(2 * m);
    // And the store reads the reference's rows like its own.
    const store = await openSessionStore({ path });
    try {
      expect(await store.messageCount()).toBe(4 * m);
      expect((await store.getMessages("reference-r0")).map((r) => r.content)).toContain(
        "r0 refmsg 7 pythonside",
      );
    } finally {
      await store.close();
    }
  });
});

describe("writes under contention: the caller's event loop (writer: inline)", { timeout: 180_000 }, () => {
  it("the event loop keeps running while a write waits 3 s for a lock (no freeze like the busy handler's)", async () => {
    const measure = async (options: Record<string, unknown>) => {
      const path = await freshDatabase();
      const waiter = startChild("loop-delay-writer.mjs", [path, JSON.stringify(options)]);
      await waiter.waitForLine("ready");
      const holder = startChild("lock-holder.mjs", [path, "3000", "commit"]);
      await holder.waitForLine("locked");
      waiter.process.stdin?.write("go\n");
      const { code, stderr } = await waiter.exited;
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
      await holder.exited;
      return waiter.result<{ outcome: string; waitedMs: number; p99: number; max: number }>();
    };
    const store = await measure({});
    expect(store.outcome).toBe("ok");
    expect(store.waitedMs).toBeGreaterThan(1500); // it really waited for the lock
    // Control: the same wait inside SQLite's busy handler freezes the loop, and the
    // measurement sees it. (Without shareCommits: a store that has posted its append retries
    // the lock with the busy handler off, so only its first attempt would block.)
    const blocking = await measure({ busyTimeoutMs: 2500, shareCommits: false });
    expect(blocking.p99).toBeGreaterThan(100);
    // Compared with the control, not with a fixed figure: a loaded machine delays every timer
    // (at load 10 on 2 cores: store 5-8 ms, control 430-580 ms; the absolute p99 is the bench's job: scenario
    // contention, eventLoopP99Ms).
    expect(store.p99 * 5).toBeLessThan(blocking.p99);
  });
});
