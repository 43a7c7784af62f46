import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SqliteStoreStats } from "@hermes/core";
import { openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { seedMessages } from "./helpers/seed-messages.js";
import { tempDir } from "./helpers/temp-dir.js";

// While the short-CJK index is being built, the caller's thread never waits for the write lock
// inside SQLite (better-sqlite3's busy handler sleeps synchronously: the event loop would stop).
// A write that meets the lock waits on timers and resolves once the lock is free.

/** Messages in the seed file: above what a search brings up to date inline, so a build starts. */
const MESSAGES = 2_000;
let seedDir: string;
let seed: string;

beforeAll(async () => {
  seedDir = mkdtempSync(join(tmpdir(), "hermes-cjk-caller-"));
  seed = join(seedDir, "state.db");
  const contents = Array.from({ length: MESSAGES }, (_, i) =>
    (i + 1) % 5 === 0 ? `去桂林 ${i + 1}` : `message ${i + 1}`,
  );
  await seedMessages(seed, contents);
});
afterAll(() => rmSync(seedDir, { recursive: true, force: true }));

const opened: SessionStore[] = [];
const blockers: Database.Database[] = [];
afterEach(async () => {
  for (const b of blockers.splice(0)) {
    if (b.inTransaction) b.exec("ROLLBACK");
    b.close();
  }
  for (const s of opened.splice(0)) await s.close();
});

const cjkOf = (store: SessionStore) => (store.stats() as SqliteStoreStats).sideIndexes.cjk;

/** SQLite's busy timeout of the store: a wait in its handler would stop the caller's thread this long. */
const BUSY_MS = 4_000;
/** The lock is released after this many timer ticks (or at the deadline). */
const TICKS = 20;
const TICK_MS = 5;
const DEADLINE_MS = 10_000;
/** Longest stretch without a tick allowed: far above a loaded machine's stalls, half the busy timeout. */
const MAX_GAP_MS = BUSY_MS / 2;

describe("short-CJK index build: the caller's thread never waits for the lock in SQLite", () => {
  it("a write issued while the lock is held during a build resolves after the release, the event loop serving timers throughout", async () => {
    const path = join(tempDir(), "state.db");
    copyFileSync(seed, path);
    // A long busy timeout: any wait for the lock in SQLite's own handler would hold the caller's
    // thread for BUSY_MS, and no timer could fire meanwhile.
    const store = await openSessionStore({ path, busyTimeoutMs: BUSY_MS, writer: "inline", readers: 0 });
    opened.push(store);
    // The lock is held before the build starts: the builder cannot finish while it is.
    const blocker = new Database(path);
    blockers.push(blocker);
    blocker.exec("BEGIN IMMEDIATE");
    await store.searchMessages("桂林", { limit: 5 }); // starts the build (and scans meanwhile)
    expect(cjkOf(store)).toMatchObject({ state: "building", active: true });

    let ticks = 0;
    let releasedAt: number | undefined;
    let ticksAtRelease = -1;
    const started = performance.now();
    let lastTick = started;
    let longestGap = 0;
    const released = new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        ticks++;
        const now = performance.now();
        longestGap = Math.max(longestGap, now - lastTick);
        lastTick = now;
        if (ticks < TICKS && performance.now() - started < DEADLINE_MS) return;
        clearInterval(timer);
        ticksAtRelease = ticks;
        releasedAt = performance.now();
        blocker.exec("COMMIT");
        resolve();
      }, TICK_MS);
    });
    const appended = store.appendMessage({ sessionId: "s", role: "user", content: "written meanwhile" });
    const id = await appended;
    const resolvedAt = performance.now();
    await released;

    // The timers ran while the write waited: the release came from the ticks, not the deadline,
    // and no tick waited anywhere near a busy handler's sleep.
    expect(ticksAtRelease).toBeGreaterThanOrEqual(TICKS);
    expect(longestGap).toBeLessThan(MAX_GAP_MS);
    expect(resolvedAt - started).toBeLessThan(DEADLINE_MS);
    // The write waited for the lock: it resolved after the release, and is in the file.
    expect(releasedAt).toBeDefined();
    expect(resolvedAt).toBeGreaterThan(releasedAt as number);
    const check = new Database(path, { readonly: true });
    try {
      expect(check.prepare("SELECT content FROM messages WHERE id = ?").pluck().get(id)).toBe(
        "written meanwhile",
      );
    } finally {
      check.close();
    }
  }, 30_000);
});
