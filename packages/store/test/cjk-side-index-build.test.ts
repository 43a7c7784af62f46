import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import type { SqliteStoreStats } from "@hermes/core";
import { openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cjkBuildSettled } from "./helpers/cjk-build-settled.js";
import { searchHitIds as ids } from "./helpers/search-hit-ids.js";
import { tempDir } from "./helpers/temp-dir.js";
import { threadCount } from "./helpers/thread-count.js";

// The short-CJK index of a big file is built on a worker thread: searches meanwhile scan and
// give the same hits, progress shows in stats(), close() stops the build, a killed process
// leaves a file the next open resumes from, and other writers keep writing.

/** Messages in the seed file: well above what a search brings up to date inline. */
const MESSAGES = 10_000;
let seedDir: string;
let seed: string;

beforeAll(async () => {
  seedDir = mkdtempSync(join(tmpdir(), "hermes-cjk-seed-"));
  seed = join(seedDir, "state.db");
  const store = await openSessionStore({ path: seed });
  await store.createSession({ id: "s", source: "cli" });
  await store.close();
  const raw = new Database(seed);
  const session = raw.prepare("INSERT INTO sessions (id, source, started_at) VALUES (?, 'cli', ?)");
  const add = raw.prepare(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
  );
  raw.transaction(() => {
    // 100 messages a session, as in a real file (a search gives each hit its neighbours).
    for (let i = 0; i < MESSAGES / 100; i++) session.run(`t${i}`, 1_800_000_000 + i * 100);
    for (let i = 1; i <= MESSAGES; i++) {
      const content = i % 7 === 0 ? `第${i}次去桂林` : i % 11 === 0 ? `林${i}` : `english message ${i}`;
      add.run(`t${Math.floor((i - 1) / 100)}`, content, 1_800_000_000 + i);
    }
  })();
  raw.pragma("wal_checkpoint(TRUNCATE)");
  raw.close();
});
afterAll(() => rmSync(seedDir, { recursive: true, force: true }));

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

/** A copy of the seed file (no short-CJK index in it yet). */
function copyOfSeed(): string {
  const path = join(tempDir(), "state.db");
  copyFileSync(seed, path);
  return path;
}

async function open(
  path: string,
  o: {
    readOnly?: boolean;
    cjkIndex?: "lazy" | "eager" | "off";
    readers?: number;
    writer?: "inline" | "thread";
  } = {},
) {
  const store = await openSessionStore({ path, ...o });
  opened.push(store);
  return store;
}

const cjkOf = (store: SessionStore) => (store.stats() as SqliteStoreStats).sideIndexes.cjk;

/** The reference's LIKE scan over the file, ids ascending. */
function likeIds(path: string, term: string): number[] {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(
        "SELECT id FROM messages WHERE content LIKE :t OR tool_calls LIKE :t OR tool_name LIKE :t ORDER BY id",
      )
      .pluck()
      .all({ t: `%${term}%` }) as number[];
  } finally {
    db.close();
  }
}

/** The index's backfill cursor and end as the file says, or `null` when the index is absent. */
function backfillOf(path: string): { next: number; end: number } | null {
  const db = new Database(path, { readonly: true });
  try {
    const has = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'hermes_search_state'").get();
    if (has === undefined) return null;
    const rows = db.prepare("SELECT key, value FROM hermes_search_state").all() as Array<{
      key: string;
      value: number;
    }>;
    const value = (k: string) => rows.find((r) => r.key === k)?.value ?? -1;
    return { next: value("backfill_next"), end: value("backfill_end") };
  } finally {
    db.close();
  }
}

describe("short-CJK index: the build on a worker thread", () => {
  // With a writer thread the builder is the writer's: stats() on this side must still show it run.
  it.each(["inline", "thread"] as const)(
    "a search during the build answers by the scan with the same hits as after it; stats() shows the progress (writer: %s)",
    async (writer) => {
      const path = copyOfSeed();
      const store = await open(path, { writer });
      expect(cjkOf(store)).toEqual({
        state: "absent",
        active: false,
        indexedRows: 0,
        totalRows: MESSAGES,
        pendingChanges: 0,
        lastError: null,
      });
      // Another connection holds the write lock: the builder waits, so the build is surely on.
      const blocker = new Database(path);
      blocker.exec("BEGIN IMMEDIATE");
      let during: number[];
      let duringOne: number[];
      let firstPage: Array<{ id: number; snippet: string }>;
      try {
        during = await ids(store, "桂林");
        duringOne = await ids(store, "林");
        firstPage = (await store.searchMessages("桂林", { limit: 5 })).map((h) => ({
          id: h.id,
          snippet: h.snippet,
        }));
        expect(cjkOf(store)).toMatchObject({
          state: "building",
          active: true,
          indexedRows: 0,
          totalRows: MESSAGES,
        });
      } finally {
        blocker.exec("ROLLBACK");
        blocker.close();
      }
      expect(during).toEqual(likeIds(path, "桂林"));
      expect(during).toHaveLength(Math.floor(MESSAGES / 7));
      expect(duringOne).toEqual(likeIds(path, "林"));
      expect(await cjkBuildSettled(store)).toEqual({
        state: "ready",
        active: false,
        indexedRows: MESSAGES,
        totalRows: MESSAGES,
        pendingChanges: 0,
        lastError: null,
      });
      expect(await ids(store, "桂林")).toEqual(during);
      expect(await ids(store, "林")).toEqual(duringOne);
      expect(
        (await store.searchMessages("桂林", { limit: 5 })).map((h) => ({ id: h.id, snippet: h.snippet })),
      ).toEqual(firstPage);
      expect((await store.verifySearchIndex()).indexes[2]).toMatchObject({ status: "ok", pending: 0 });
    },
  );

  it("with read workers, the scans during the build give the same hits as the index after it", async () => {
    const path = copyOfSeed();
    const store = await open(path, { readers: 2 });
    const blocker = new Database(path);
    blocker.exec("BEGIN IMMEDIATE");
    const during: number[][] = [];
    try {
      // Several rounds: the pool's workers start once reads have taken a while in-thread.
      for (let i = 0; i < 5; i++) during.push(await ids(store, "桂林"), await ids(store, "林"));
      expect(cjkOf(store)).toMatchObject({ state: "building", active: true });
    } finally {
      blocker.exec("ROLLBACK");
      blocker.close();
    }
    expect(await cjkBuildSettled(store)).toMatchObject({ state: "ready", indexedRows: MESSAGES });
    const after = [await ids(store, "桂林"), await ids(store, "林")];
    for (let i = 0; i < during.length; i++) expect(during[i]).toEqual(after[i % 2]);
    expect(after[0]).toEqual(likeIds(path, "桂林"));
  });

  it('a build running when writer: "auto" moves the writes to its thread goes on there and ends exact', async () => {
    const path = copyOfSeed();
    const store = await openSessionStore({ path, readers: 1, warmReaders: true });
    opened.push(store);
    expect(await ids(store, "桂林")).toEqual(likeIds(path, "桂林")); // starts the build here
    expect(cjkOf(store).active).toBe(true);
    // Every turn of the event loop until the build ends: the status never says no build runs
    // while the index is unfinished (the hand-over stops it here before the writer goes on).
    const idle: string[] = [];
    let watching = true;
    const watch = () => {
      const cjk = cjkOf(store);
      if (!cjk.active && cjk.state !== "ready") idle.push(`${cjk.state} at ${cjk.indexedRows}`);
      else if (!cjk.active) watching = false;
      if (watching) setImmediate(watch);
    };
    setImmediate(watch);
    const ours: number[] = [];
    for (let i = 0; ours.length < 40; i++) {
      ours.push(await store.appendMessage({ sessionId: "s", role: "user", content: `桂林交接${i}` }));
      if (i === 20) for (let w = 0; w < 200 && store.writerThread === undefined; w++) await sleep(10);
    }
    expect(store.writerThread?.alive).toBe(true);
    const settled = await cjkBuildSettled(store);
    watching = false;
    expect(idle).toEqual([]);
    expect(settled).toMatchObject({
      state: "ready",
      indexedRows: MESSAGES + 40,
      lastError: null,
    });
    expect(await ids(store, "桂林")).toEqual(likeIds(path, "桂林"));
    expect(await ids(store, "交接")).toEqual(ours);
  });

  it("the store's own writes and another process's go on while it builds; the index ends exact", async () => {
    const path = copyOfSeed();
    const store = await open(path);
    expect(await ids(store, "桂林")).toEqual(likeIds(path, "桂林")); // starts the build
    const other = referenceAppends(path, 20);
    const ours: number[] = [];
    for (let i = 0; i < 40; i++) {
      ours.push(await store.appendMessage({ sessionId: "s", role: "user", content: `我们在桂林${i}` }));
    }
    const theirs = await other.ids;
    expect(ours).toHaveLength(40);
    expect(theirs).toHaveLength(20);
    expect(await cjkBuildSettled(store)).toMatchObject({ state: "ready", lastError: null });
    const expected = likeIds(path, "桂林");
    expect(expected).toEqual(expect.arrayContaining([...ours, ...theirs]));
    expect(await ids(store, "桂林")).toEqual(expected);
    expect((await store.verifySearchIndex()).ok).toBe(true);
  });

  it("close() while building stops the builder (no thread left, the lock free); the next open resumes", async () => {
    const path = copyOfSeed();
    const store = await open(path);
    const threadsBefore = threadCount();
    await store.searchMessages("桂林");
    while (cjkOf(store).indexedRows === 0) await sleep(2);
    await store.close();
    opened.splice(0);
    expect(cjkOf(store).active).toBe(false);
    expect(threadCount()).toBe(threadsBefore);
    // Nothing writes any more: another connection takes the write lock at once.
    const raw = new Database(path, { timeout: 0 });
    raw.exec("BEGIN IMMEDIATE");
    raw.exec("ROLLBACK");
    expect(raw.pragma("integrity_check", { simple: true })).toBe("ok");
    raw.close();
    const stopped = backfillOf(path);
    expect(stopped).not.toBeNull();
    expect(stopped?.next).toBeGreaterThan(0);
    expect(stopped?.next).toBeLessThan(MESSAGES);

    const again = await open(path);
    expect(cjkOf(again)).toMatchObject({ state: "building", active: false, indexedRows: stopped?.next });
    expect(await ids(again, "桂林")).toEqual(likeIds(path, "桂林"));
    expect(await cjkBuildSettled(again)).toMatchObject({ state: "ready", indexedRows: MESSAGES });
    expect(await ids(again, "桂林")).toEqual(likeIds(path, "桂林"));
    expect((await again.verifySearchIndex()).ok).toBe(true);
  });

  it("a process killed mid-build leaves a file the next open resumes from", async () => {
    const path = copyOfSeed();
    const child = spawn(process.execPath, ["--input-type=module", "-e", BUILDER_CHILD, path], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      await lineFrom(child);
      let state = backfillOf(path);
      while (state === null || state.next === 0) {
        await sleep(2);
        state = backfillOf(path);
      }
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    } finally {
      child.kill("SIGKILL");
    }
    const killed = backfillOf(path);
    expect(killed?.next).toBeGreaterThan(0);
    expect(killed?.next).toBeLessThan(MESSAGES);
    const store = await open(path);
    expect(cjkOf(store)).toMatchObject({ state: "building", indexedRows: killed?.next });
    expect(await ids(store, "桂林")).toEqual(likeIds(path, "桂林"));
    expect(await cjkBuildSettled(store)).toMatchObject({ state: "ready", indexedRows: MESSAGES });
    expect(await ids(store, "林")).toEqual(likeIds(path, "林"));
    expect((await store.verifySearchIndex()).ok).toBe(true);
  });
});

describe("short-CJK index: a build that fails", () => {
  it("a build that cannot get the lock stops with lastError, is not retried at once, and searches still scan", async () => {
    const path = copyOfSeed();
    const store = await openSessionStore({ path, writeDeadlineMs: 200 });
    opened.push(store);
    const blocker = new Database(path);
    blocker.exec("BEGIN IMMEDIATE");
    try {
      expect(await ids(store, "桂林")).toEqual(likeIds(path, "桂林"));
      const failed = await cjkBuildSettled(store);
      expect(failed).toMatchObject({ state: "absent", active: false });
      expect(failed.lastError).toMatch(/stayed locked by another connection/);
      expect(await ids(store, "桂林")).toEqual(likeIds(path, "桂林"));
      expect(cjkOf(store)).toMatchObject({ active: false, lastError: failed.lastError });
    } finally {
      blocker.exec("ROLLBACK");
      blocker.close();
    }
    expect(backfillOf(path)).toBeNull();
  });
});

describe("short-CJK index: who builds it", () => {
  it("a read-only store reports the state and never builds: it scans", async () => {
    const path = copyOfSeed();
    const store = await open(path, { readOnly: true });
    expect(cjkOf(store)).toMatchObject({ state: "absent", active: false, totalRows: MESSAGES });
    expect(await ids(store, "桂林")).toEqual(likeIds(path, "桂林"));
    expect(cjkOf(store)).toMatchObject({ state: "absent", active: false });
    expect(backfillOf(path)).toBeNull();
  });

  it("cjkIndex: 'eager' builds at open without a search; 'off' never builds and scans", async () => {
    const eagerPath = copyOfSeed();
    const eager = await open(eagerPath, { cjkIndex: "eager" });
    expect(cjkOf(eager)).toMatchObject({ state: "building", active: true });
    expect(await cjkBuildSettled(eager)).toMatchObject({ state: "ready", indexedRows: MESSAGES });
    expect(await ids(eager, "桂林")).toEqual(likeIds(eagerPath, "桂林"));

    const offPath = copyOfSeed();
    const off = await open(offPath, { cjkIndex: "off" });
    expect(await ids(off, "桂林")).toEqual(likeIds(offPath, "桂林"));
    expect(cjkOf(off)).toMatchObject({ state: "absent", active: false });
    expect(backfillOf(offPath)).toBeNull();
  });

  it("rejects an unknown cjkIndex mode with INVALID_ARGUMENT", async () => {
    await expect(
      openSessionStore({ path: copyOfSeed(), cjkIndex: "sometimes" as never }),
    ).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});

/** A child that opens the store, starts the build with a search, says so, and waits to be killed. */
const BUILDER_CHILD = `
const { openSessionStore } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, "../dist/index.js")).href)});
const store = await openSessionStore({ path: process.argv[1] });
await store.searchMessages("桂林");
process.stdout.write("building\\n");
setInterval(() => {}, 1000);
`;

/** The reference's appends from another process (plain better-sqlite3, its 1 s busy timeout). */
const REFERENCE_APPENDS = `
import Database from "better-sqlite3";
const db = new Database(process.argv[1], { timeout: 1000 });
const add = db.prepare("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', ?, ?)");
for (let i = 0; i < Number(process.argv[2]); i++) {
  db.exec("BEGIN IMMEDIATE");
  console.log(String(add.run("他们在桂林" + i, Date.now() / 1000).lastInsertRowid));
  db.prepare("UPDATE sessions SET message_count = message_count + 1 WHERE id = 's'").run();
  db.exec("COMMIT");
}
db.close();
`;

function referenceAppends(path: string, n: number): { ids: Promise<number[]> } {
  const child = spawn(process.execPath, ["--input-type=module", "-e", REFERENCE_APPENDS, path, String(n)], {
    cwd: join(import.meta.dirname, ".."),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    err += d;
  });
  return {
    ids: new Promise((resolve, reject) =>
      child.once("exit", (code) =>
        code === 0
          ? resolve(out.split("\n").filter(Boolean).map(Number))
          : reject(new Error(`reference writer failed: ${err}`)),
      ),
    ),
  };
}

/** Resolves with the child's first line of output. */
function lineFrom(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = "";
    child.stdout?.on("data", (d) => {
      buf += d;
      const at = buf.indexOf("\n");
      if (at >= 0) resolve(buf.slice(0, at));
    });
    child.once("exit", (code) => reject(new Error(`child ended (${code}) before it said anything`)));
  });
}
