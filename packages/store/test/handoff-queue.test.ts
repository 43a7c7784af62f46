import { existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
// The queue and the write queue themselves (not part of the public surface): built code.
import { DatabaseConnection } from "../dist/database-connection.js";
import { HandoffQueue } from "../dist/write/handoff-queue.js";
import { DEFAULT_WRITE_POLICY } from "../dist/write/write-policy.js";
import { WriteQueue } from "../dist/write/write-queue.js";
import { startChild } from "./helpers/child-process.js";
import { tempDir } from "./helpers/temp-dir.js";

const opened: Array<{ close(): unknown }> = [];
afterEach(() => {
  for (const thing of opened.splice(0).reverse()) thing.close();
});

function dbPath(): string {
  return join(tempDir("hermes-handoff-"), "state.db");
}

/** Joins the queue of `path`, with stale and long-wait bounds long enough for a loaded machine. */
function join_(path: string, staleMs = 60_000, longWaitMs = 60_000): HandoffQueue {
  const queue = HandoffQueue.open(path, { staleMs, longWaitMs });
  if (queue === undefined) throw new Error("could not join the queue");
  opened.push(queue);
  return queue;
}

/** Resolves to "woken" if `waiting` settles first, "timer" if `ms` pass first. */
async function wokenWithin(waiting: Promise<void>, ms: number): Promise<"woken" | "timer"> {
  return Promise.race([waiting.then(() => "woken" as const), sleep(ms).then(() => "timer" as const)]);
}

describe("HandoffQueue: cross-process order of writers", () => {
  it("puts the writer that has waited longest at the head", async () => {
    const path = dbPath();
    const a = join_(path);
    const b = join_(path);
    const c = join_(path);
    expect(a.mustDefer()).toBe(false); // nobody waits: try the lock
    b.enqueue();
    await sleep(2);
    c.enqueue();
    expect(a.mustDefer()).toBe(true); // a newcomer goes behind the waiters
    expect(b.mustDefer()).toBe(false); // b waited first: its turn
    expect(c.mustDefer()).toBe(true); // c is behind b
    b.enqueue(); // waiting again keeps the place
    expect(c.mustDefer()).toBe(true);
    b.leave();
    expect(c.mustDefer()).toBe(false);
    expect(a.mustDefer()).toBe(true);
    c.leave();
    expect(a.mustDefer()).toBe(false);
  });

  it("wakes the head when the lock is handed off, not the others", async () => {
    const path = dbPath();
    const holder = join_(path);
    const head = join_(path);
    const second = join_(path);
    head.enqueue();
    await sleep(2);
    second.enqueue();
    const headWaits = head.wait(30_000);
    const secondWaits = second.wait(30_000);
    holder.handOff();
    expect(await wokenWithin(headWaits, 5_000)).toBe("woken");
    expect(await wokenWithin(secondWaits, 300)).toBe("timer");
    expect(holder.handoffs).toBe(1);
    head.leave();
    head.handOff(); // the head wrote and released: now the second's turn
    expect(await wokenWithin(secondWaits, 5_000)).toBe("woken");
  });

  it("passes over a waiter whose heartbeat is stale (killed, suspended)", async () => {
    const path = dbPath();
    // Bounds of 1 s: a loaded machine may pause a few hundred ms between two calls.
    const a = join_(path, 1_000);
    const b = join_(path, 1_000);
    b.enqueue();
    expect(a.mustDefer()).toBe(true);
    await sleep(1_200);
    expect(a.mustDefer()).toBe(false);
    b.enqueue(); // a heartbeat makes it count again, with its old place
    expect(a.mustDefer()).toBe(true);
  });

  it("lets every waiter try the lock again once the head has waited long (a long hold)", async () => {
    const path = dbPath();
    const a = join_(path, 60_000, 1_000);
    const b = join_(path, 60_000, 1_000);
    b.enqueue();
    expect(a.turn()).toBe("queue");
    a.enqueue();
    expect(a.turn()).toBe("queue"); // queued behind b, whose wait is still short
    expect(b.turn()).toBe("go");
    await sleep(1_200);
    b.enqueue(); // b is alive, still waiting: the lock is held long
    expect(a.turn()).toBe("race");
    expect(b.turn()).toBe("go");
    b.leave();
    expect(a.turn()).toBe("go");
  });

  it("keeps a wake-up that arrives between two waits for the next wait", async () => {
    const path = dbPath();
    const waker = join_(path);
    const sleeper = join_(path);
    expect(waker.wake(sleeper.slot)).toBe(true);
    await sleep(200); // the change notification arrives while the sleeper is not waiting
    expect(await wokenWithin(sleeper.wait(30_000), 5_000)).toBe("woken");
    // It is used up: the next wait sleeps until its own wake-up or timer.
    expect(await wokenWithin(sleeper.wait(30_000), 300)).toBe("timer");
  });

  it("makes newcomers queue while a store announces it holds the lock, until it leaves", () => {
    const path = dbPath();
    const holder = join_(path);
    const newcomer = join_(path);
    expect(newcomer.turn()).toBe("go");
    expect(newcomer.holderSeen).toBe(false);
    holder.hold();
    expect(newcomer.turn()).toBe("queue");
    expect(newcomer.holderSeen).toBe(true);
    holder.leave();
    expect(newcomer.turn()).toBe("go");
    holder.hold();
    holder.enqueue(); // waiting again: no longer holding
    expect(newcomer.holderSeen).toBe(false);
    expect(newcomer.turn()).toBe("queue"); // but it waits, so it goes first
    expect(holder.turn()).toBe("go");
  });

  it("lists the requests other live stores posted, not its own", () => {
    const path = dbPath();
    const a = join_(path);
    const b = join_(path);
    const c = join_(path);
    b.setPosted(7);
    a.setPosted(3);
    expect(a.postedRequests()).toEqual([{ slot: b.slot, owner: b.owner, pid: process.pid, seq: 7 }]);
    expect(
      c
        .postedRequests()
        .map((r) => r.seq)
        .sort(),
    ).toEqual([3, 7]);
    b.setPosted(0);
    expect(a.postedRequests()).toEqual([]);
  });

  it("frees its slot at close, and a closed queue's place is gone", () => {
    const path = dbPath();
    const a = join_(path);
    const b = HandoffQueue.open(path, { staleMs: 60_000 });
    expect(b).toBeDefined();
    b?.enqueue();
    expect(a.mustDefer()).toBe(true);
    b?.close();
    expect(a.mustDefer()).toBe(false);
    // 64 slots: closing and reopening never runs out.
    for (let i = 0; i < 100; i++) HandoffQueue.open(path)?.close();
    expect(HandoffQueue.open(path)).toBeDefined();
  });

  it("is not joined through a symbolic link planted in place of its directory", async () => {
    const path = dbPath();
    const elsewhere = join(tempDir("hermes-handoff-target-"), "dir");
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, `${path}-writers`);
    expect(HandoffQueue.open(path)).toBeUndefined();
    // The store still opens and writes; it races for the lock as without the queue.
    const store = await openSessionStore({ path });
    await store.ensureSession({ id: "s", source: "cli" });
    await store.appendMessage({ sessionId: "s", role: "user", content: "hi" });
    expect(store.stats().handoffs).toBe(0);
    await store.close();
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it("is skipped when fairWrites is false", async () => {
    const path = dbPath();
    const store = await openSessionStore({ path, fairWrites: false });
    await store.ensureSession({ id: "s", source: "cli" });
    await store.close();
    expect(existsSync(`${path}-writers`)).toBe(false);
  });
});

describe("WriteQueue with the hand-off queue", () => {
  function writer(path: string) {
    const conn = new DatabaseConnection(path, {
      busyTimeoutMs: 5,
      synchronous: "FULL",
      journalSizeLimit: 1 << 20,
      readOnly: false,
    });
    opened.push(conn);
    conn.db.pragma("journal_mode = WAL");
    conn.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)");
    const turns = join_(path);
    const writes = new WriteQueue(conn, DEFAULT_WRITE_POLICY, () => 0, undefined, turns);
    return {
      writes,
      insert: (v: string) =>
        writes.run("insert", () => conn.statement("INSERT INTO t (v) VALUES (?)").run(v)),
    };
  }

  it("gives the lock to the writer that waited first, whatever the timers say", async () => {
    const path = dbPath();
    const first = writer(path);
    const second = writer(path);
    const holder = new Database(path);
    opened.push(holder);
    for (let round = 0; round < 5; round++) {
      holder.exec("BEGIN IMMEDIATE");
      const a = first.insert(`first-${round}`);
      await sleep(15); // `first` has met the busy lock and waits at the head of the queue
      const b = second.insert(`second-${round}`);
      await sleep(30); // `second` queues behind it, polling nothing
      holder.exec("COMMIT");
      await Promise.all([a, b]);
    }
    const order = (holder.prepare("SELECT v FROM t ORDER BY id").pluck().all() as string[]).map((v) =>
      v.replace(/-\d+$/, ""),
    );
    expect(order).toEqual(Array.from({ length: 5 }, () => ["first", "second"]).flat());
    expect(second.writes.stats.deferrals).toBeGreaterThan(0);
    expect(first.writes.stats.handoffs).toBeGreaterThanOrEqual(5);
  });

  it("does not wait for a queued writer whose process was killed", async () => {
    const path = dbPath();
    const setup = await openSessionStore({ path });
    await setup.ensureSession({ id: "writer-k", source: "t" });
    await setup.ensureSession({ id: "mine", source: "t" });
    await setup.close();
    const child = startChild("contention-writer.mjs", [path, "k", "1", JSON.stringify({ waitForGo: true })]);
    await child.waitForLine("ready");
    const holder = new Database(path);
    opened.push(holder);
    holder.exec("BEGIN IMMEDIATE");
    // The store in the other process meets the held lock and queues for it; then it is killed.
    child.process.stdin?.write("go\n");
    await sleep(300);
    child.process.kill("SIGKILL");
    await child.exited;
    holder.exec("COMMIT");
    const store = await openSessionStore({ path });
    const id = await store.appendMessage({ sessionId: "mine", role: "user", content: "after" });
    expect(id).toBeGreaterThan(0);
    await store.close();
  });
});

describe("DatabaseConnection.withoutBusyWait", () => {
  it("turns SQLite's busy handler off inside, and back on after, even when the body throws", () => {
    const path = dbPath();
    const conn = new DatabaseConnection(path, {
      busyTimeoutMs: 2_000,
      synchronous: "FULL",
      journalSizeLimit: -1,
      readOnly: false,
    });
    opened.push(conn);
    const timeout = () => conn.db.pragma("busy_timeout", { simple: true });
    expect(timeout()).toBe(2_000);
    expect(conn.withoutBusyWait(() => timeout())).toBe(0);
    expect(timeout()).toBe(2_000);
    expect(() =>
      conn.withoutBusyWait(() => {
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(timeout()).toBe(2_000);
  });
});
