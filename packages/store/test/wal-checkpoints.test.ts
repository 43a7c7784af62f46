import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { startChild } from "./helpers/child-process.js";
import { tempDir } from "./helpers/temp-dir.js";

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

/** Messages in the database file alone, as a copy without its `-wal` shows them. */
function messagesInMainFile(path: string): number {
  const copy = join(tempDir("hermes-ckpt-copy-"), "main-only.db");
  copyFileSync(path, copy);
  const db = new Database(copy, { readonly: true });
  try {
    return db.prepare("SELECT COUNT(*) FROM messages").pluck().get() as number;
  } finally {
    db.close();
  }
}

describe("WAL checkpoints of the write path", { timeout: 120_000 }, () => {
  it("the periodic checkpoint copies the WAL into the file after the 50th transaction, not inside a COMMIT", async () => {
    const path = join(tempDir("hermes-ckpt-"), "state.db");
    const store = await openSessionStore({ path, readers: 0 });
    opened.push(store);
    await store.createSession({ id: "s", source: "cli" });
    for (let i = 0; i < 40; i++)
      await store.appendMessage({ sessionId: "s", role: "user", content: `m${i}` });
    // Before the 50th transaction nothing was checkpointed: the file alone has none of these
    // messages (SQLite's own checkpoint at COMMIT is off).
    expect(store.stats().checkpoints).toBe(0);
    expect(messagesInMainFile(path)).toBe(0);
    for (let i = 40; i < 60; i++)
      await store.appendMessage({ sessionId: "s", role: "user", content: `m${i}` });
    expect(store.stats().checkpoints).toBe(1);
    // The 50th transaction's checkpoint copied what was committed until then.
    expect(messagesInMainFile(path)).toBeGreaterThanOrEqual(49);
    expect(await store.messageCount()).toBe(60);
  });

  it("RESTART checkpoints past 4 MiB of WAL keep it bounded while the writes go on", async () => {
    const path = join(tempDir("hermes-ckpt-"), "state.db");
    const store = await openSessionStore({ path, readers: 0, checkpointEvery: 0 });
    opened.push(store);
    await store.createSession({ id: "s", source: "cli" });
    const body = "y".repeat(4000);
    for (let i = 0; i < 3000; i++) {
      await store.appendMessage({ sessionId: "s", role: "user", content: `${i} ${body}` });
    }
    const stats = store.stats();
    expect(await store.messageCount()).toBe(3000);
    // About 30 MB were written; with no periodic checkpoint and SQLite's own off, only the
    // RESTART checkpoints let the WAL start over.
    expect(stats.walRestarts).toBeGreaterThan(0);
    expect(stats.walBytesMax).toBeLessThan(16 * 1024 * 1024);
  });

  it("close() settles while a checkpoint is still running, and the code after it runs", async () => {
    const path = join(tempDir("hermes-ckpt-"), "state.db");
    const child = startChild("close-after-writes.mjs", [path]);
    const timer = setTimeout(() => child.process.kill("SIGKILL"), 60_000);
    const { code, signal, stderr } = await child.exited;
    clearTimeout(timer);
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
    // Code after `await store.close()` must run in every round (exit code 13 when a close()
    // never settles).
    expect(child.lines.map((l) => (JSON.parse(l) as { round: number }).round)).toEqual([1, 2, 3]);
    const db = new Database(path, { readonly: true });
    try {
      expect(db.prepare("SELECT COUNT(*) FROM messages").pluck().get()).toBe(150);
    } finally {
      db.close();
    }
  }, 90_000);
});
