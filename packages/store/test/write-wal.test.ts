import { statSync } from "node:fs";
import { join } from "node:path";
import { type OpenSessionStoreOptions, openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { startChild } from "./helpers/child-process.js";
import { tempDir } from "./helpers/temp-dir.js";

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function open(options: OpenSessionStoreOptions = {}): Promise<SessionStore> {
  const store = await openSessionStore({ path: join(tempDir("hermes-wal-"), "state.db"), ...options });
  opened.push(store);
  return store;
}

const walBytes = (path: string) => {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
};

describe("checkpoints and the WAL", { timeout: 180_000 }, () => {
  it("runs a PASSIVE checkpoint every 50 successful writes", async () => {
    const store = await open();
    await store.createSession({ id: "s", source: "wal" });
    const start = store.stats();
    // Sequential, so each write is its own transaction: the cadence counts writes either way.
    for (let i = start.writes; i < 100; i++) {
      await store.appendMessage({ sessionId: "s", role: "user", content: `m${i}` });
    }
    expect(store.stats().writes).toBe(100);
    expect(store.stats().checkpoints - start.checkpoints).toBe(2 - Math.floor(start.writes / 50));
    await store.appendMessage({ sessionId: "s", role: "user", content: "one more" });
    expect(store.stats().checkpoints - start.checkpoints).toBe(2 - Math.floor(start.writes / 50));
  });

  it("counts that cadence in transactions: a group commit counts once", async () => {
    const store = await open();
    await store.createSession({ id: "s", source: "wal" });
    const start = store.stats();
    // 30 rounds of 10 concurrent appends: 300 writes in about 60 transactions (the first call of
    // a round commits alone, the other 9 share the next transaction).
    for (let round = 0; round < 30; round++) {
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store.appendMessage({ sessionId: "s", role: "user", content: `r${round} m${i}` }),
        ),
      );
    }
    const stats = store.stats();
    expect(stats.writes - start.writes).toBe(300);
    expect(stats.groupsCommitted - start.groupsCommitted).toBeLessThan(100);
    expect(stats.walRestarts).toBe(0);
    const periodic = Math.floor(stats.groupsCommitted / 50) - Math.floor(start.groupsCommitted / 50);
    expect(stats.checkpoints - start.checkpoints).toBe(periodic);
    expect(periodic).toBeLessThan(300 / 50);
  });

  it("close() checkpoints: the WAL is empty afterwards even while another connection stays open", async () => {
    const path = join(tempDir("hermes-wal-"), "state.db");
    const store = await openSessionStore({ path });
    await store.createSession({ id: "s", source: "wal" });
    for (let i = 0; i < 20; i++)
      await store.appendMessage({ sessionId: "s", role: "user", content: `m${i}` });
    // An idle connection of another user keeps SQLite from deleting the WAL at close.
    const other = new Database(path, { readonly: true });
    try {
      expect(store.stats().walBytes).toBeGreaterThan(0);
      await store.close();
      await store.close(); // idempotent
      expect(walBytes(path)).toBe(0);
      expect(other.prepare("SELECT COUNT(*) FROM messages").pluck().get()).toBe(20);
    } finally {
      other.close();
    }
  });

  it("the WAL stays bounded while readers keep snapshots open (escalation to TRUNCATE)", async () => {
    const run = async (walMaxBytes: number) => {
      const store = await open({ walMaxBytes });
      await store.createSession({ id: "s", source: "wal" });
      const readers = startChild("snapshot-readers.mjs", [store.path, "40"]);
      await readers.waitForLine("reading");
      const body = "x".repeat(1500);
      try {
        for (let i = 0; i < 900; i++) {
          await store.appendMessage({ sessionId: "s", role: "user", content: `${i} ${body}` });
        }
      } finally {
        readers.process.stdin?.end();
        await readers.exited;
      }
      expect(await store.messageCount()).toBe(900);
      return store.stats();
    };
    const mib = 1024 * 1024;
    const bounded = await run(mib);
    expect(bounded.walEscalations).toBeGreaterThan(0);
    expect(bounded.walBytesMax).toBeLessThan(3 * mib);
    // Control: without escalation the same readers starve PASSIVE checkpoints and the WAL grows.
    const unbounded = await run(1024 * mib);
    expect(unbounded.walEscalations).toBe(0);
    expect(unbounded.walBytesMax).toBeGreaterThan(8 * mib);
  });
});
