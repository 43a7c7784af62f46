import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
// The fork's write unit on a connection of the test's own (built code, as every test here).
import { DatabaseConnection } from "../dist/database-connection.js";
import { forkSession } from "../dist/portable/fork-session.js";
import type { StoreContext } from "../dist/store-context.js";
import { DEFAULT_WRITE_POLICY } from "../dist/write/write-policy.js";
import { WriteQueue } from "../dist/write/write-queue.js";
import { tempDir } from "./helpers/temp-dir.js";

// forkSession pauses FTS5's incremental merging (`automerge`) of both FTS tables while it
// copies, and puts the setting back in the same transaction. These tests hold it to leaving the
// file as it found it (schema, `_config` rows, defensive mode) and this connection's FTS5 merging
// as it was, after a fork and after a fork that fails.

const FTS = ["messages_fts", "messages_fts_trigram"] as const;

const opened: SessionStore[] = [];
const conns: DatabaseConnection[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const c of conns.splice(0)) c.close();
});

async function open(path: string): Promise<SessionStore> {
  const store = await openSessionStore({ path });
  opened.push(store);
  return store;
}

/** A store file with session `root` of `n` messages (every third one with two tool calls). */
async function seeded(n: number): Promise<string> {
  const path = join(tempDir("hermes-fork-merge-"), "state.db");
  const store = await openSessionStore({ path });
  try {
    await store.createSession({ id: "root", source: "cli" });
    await store.setSessionTitle("root", "Root");
    await store.createSession({ id: "empty", source: "cli" });
    await store.appendMessages(
      Array.from({ length: n }, (_, i) => ({
        sessionId: "root",
        role: i % 2 === 0 ? "user" : "assistant",
        content: `message ${i} about kubernetes deployments and the quokka number ${i * 7}`,
        toolCalls: i % 3 === 2 ? [{ id: `c${i}`, function: { name: "shell" } }, { id: `d${i}` }] : null,
      })),
    );
  } finally {
    await store.close();
  }
  return path;
}

/** Schema, both FTS tables' `_config` rows (with their types) and the messages, read afresh. */
function snapshot(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    return JSON.stringify({
      schema: db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").all(),
      config: FTS.map((t) => db.prepare(`SELECT k, v, typeof(v) AS type FROM ${t}_config ORDER BY k`).all()),
      messages: db.prepare("SELECT * FROM messages ORDER BY id").all(),
      sessions: db.prepare("SELECT id FROM sessions ORDER BY id").all(),
    });
  } finally {
    db.close();
  }
}

function configRows(path: string): unknown[] {
  const db = new Database(path, { readonly: true });
  try {
    return FTS.map((t) => db.prepare(`SELECT k, v, typeof(v) AS type FROM ${t}_config ORDER BY k`).all());
  } finally {
    db.close();
  }
}

/** Both FTS indexes agree with `messages` (FTS5's check against the content table). */
function checkIndexes(path: string): void {
  const db = new Database(path);
  try {
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    for (const t of FTS) db.prepare(`INSERT INTO ${t}(${t}, rank) VALUES ('integrity-check', 1)`).run();
  } finally {
    db.close();
  }
}

/** The segments of both indexes (id and number of `_idx` rows each): the shape merging left. */
function segments(path: string): unknown[] {
  const db = new Database(path, { readonly: true });
  try {
    return FTS.map((t) =>
      db.prepare(`SELECT segid, COUNT(*) AS terms FROM ${t}_idx GROUP BY segid ORDER BY segid`).all(),
    );
  } finally {
    db.close();
  }
}

/**
 * 200 single-message writes, each its own transaction, so FTS5 flushes 200 times and (with
 * `automerge` at its default 4) merges along the way; with merging left off, the segments pile
 * up to `crisismerge` instead and the shape differs.
 */
async function appendOneByOne(store: SessionStore): Promise<void> {
  for (let i = 0; i < 200; i++) {
    await store.appendMessage({ sessionId: "root", role: "user", content: `later ${i} zebra ${i % 13}` });
  }
}

/** The fork's write unit on a connection and queue of the test's own. */
function context(path: string): StoreContext {
  const conn = new DatabaseConnection(path, {
    busyTimeoutMs: 5,
    synchronous: "FULL",
    journalSizeLimit: 1 << 24,
    readOnly: false,
  });
  conns.push(conn);
  conn.db.pragma("journal_mode = WAL");
  return { conn, writes: new WriteQueue(conn, DEFAULT_WRITE_POLICY), path, now: () => 1_790_000_000 };
}

function addFailingTrigger(path: string, sessionId: string): void {
  const db = new Database(path);
  try {
    db.exec(`CREATE TRIGGER test_refuse_fork BEFORE INSERT ON messages WHEN new.session_id = '${sessionId}'
      BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END`);
  } finally {
    db.close();
  }
}

/**
 * Four writes queued at once: an append that commits alone (inside its call), then an append,
 * `middle` and an append, which queue up behind it as one group (each in its savepoint).
 */
async function groupOfThree(ctx: StoreContext, middle: () => Promise<unknown>): Promise<string[]> {
  const append = (i: number) =>
    ctx.writes.run("append", () =>
      ctx.conn.run(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('empty', 'user', ?, ?)",
        [`around ${i}`, 1_790_000_000 + i],
      ),
    );
  const results = await Promise.allSettled([append(0), append(1), middle(), append(2)]);
  return results.map((r) => r.status);
}

describe("forkSession and FTS5 merging", () => {
  it("leaves the schema and both FTS tables' _config rows as they were; the indexes agree with messages", async () => {
    const path = await seeded(300);
    const before = JSON.parse(snapshot(path));
    const store = await open(path);
    const fork = await store.forkSession("root", { newId: "f1" });
    expect(fork.message_count).toBe(300);
    expect(fork.tool_call_count).toBe(200);
    expect(fork.title).toBe("Root #2");
    await store.close();
    const after = JSON.parse(snapshot(path));
    expect(after.schema).toEqual(before.schema);
    expect(after.config).toEqual(before.config);
    expect(after.config[0]).toEqual([{ k: "version", v: 4, type: "integer" }]);
    expect(after.messages.length).toBe(600);
    checkIndexes(path);
    // The copies are found through both indexes (porter words, and a trigram substring).
    const reopened = await open(path);
    const words = await reopened.searchMessages("quokka", { limit: 1000 });
    expect(words.filter((h) => h.session_id === "f1").length).toBe(300);
    const db = new Database(path, { readonly: true });
    const grams = db
      .prepare(
        `SELECT COUNT(*) FROM messages_fts_trigram JOIN messages ON messages.id = messages_fts_trigram.rowid
         WHERE messages_fts_trigram MATCH '"ubernet"' AND session_id = 'f1'`,
      )
      .pluck()
      .get();
    db.close();
    expect(grams).toBe(300);
  });

  it("puts back an automerge row another client set: integer, digits in text, a value FTS5 refuses", async () => {
    const path = await seeded(50);
    const db = new Database(path);
    db.prepare("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 8)").run();
    db.prepare("INSERT INTO messages_fts_trigram(messages_fts_trigram, rank) VALUES ('automerge', 2)").run();
    // FTS5 stores what it was given as an integer; digits in text come from a plain write.
    db.unsafeMode(true);
    db.prepare("UPDATE messages_fts_trigram_config SET v = '2' WHERE k = 'automerge'").run();
    db.close();
    const before = configRows(path);
    expect(before).toEqual([
      [
        { k: "automerge", v: 8, type: "integer" },
        { k: "version", v: 4, type: "integer" },
      ],
      [
        { k: "automerge", v: "2", type: "text" },
        { k: "version", v: 4, type: "integer" },
      ],
    ]);
    const store = await open(path);
    await store.forkSession("root", { newId: "f1" });
    expect(configRows(path)).toEqual(before);

    // A row FTS5 itself would refuse (it ignores it and uses its default) is written back as is.
    await store.close();
    const raw = new Database(path);
    raw.unsafeMode(true);
    raw.prepare("UPDATE messages_fts_config SET v = 99.5 WHERE k = 'automerge'").run();
    raw.close();
    const odd = configRows(path);
    const again = await open(path);
    await again.forkSession("root", { newId: "f2" });
    expect(configRows(path)).toEqual(odd);
    checkIndexes(path);
  });

  it("leaves an automerge of 0 alone, and SQLite's defensive mode back on", async () => {
    const path = await seeded(30);
    const db = new Database(path);
    db.prepare("INSERT INTO messages_fts_trigram(messages_fts_trigram, rank) VALUES ('automerge', 0)").run();
    db.close();
    const before = configRows(path);
    const ctx = context(path);
    await forkSession(ctx, "root", { newId: "f1" });
    expect(configRows(path)).toEqual(before);
    // Shadow tables are writable only with defensive mode off: it must be on again.
    expect(() => ctx.conn.run("DELETE FROM messages_fts_config WHERE k = 'version'")).toThrow(
      /may not be modified/,
    );
  });

  it("restores this connection's merging after a fork: later writes merge as on a file never forked", async () => {
    // The fork of an empty session changes no index data, so afterwards the two files must
    // take 200 writes into exactly the same segments, unless merging were still paused.
    const path = await seeded(20);
    const control = join(tempDir("hermes-fork-merge-"), "control.db");
    copyFileSync(path, control);
    const store = await open(path);
    const fork = await store.forkSession("empty", { newId: "f-empty" });
    expect(fork.message_count).toBe(0);
    await appendOneByOne(store);
    const other = await open(control);
    await appendOneByOne(other);
    await store.close();
    await other.close();
    expect(segments(path)).toEqual(segments(control));
    // The test can tell: with merging off, the same writes leave other segments.
    const paused = join(tempDir("hermes-fork-merge-"), "paused.db");
    copyFileSync(await seeded(20), paused);
    const db = new Database(paused);
    for (const t of FTS) db.prepare(`INSERT INTO ${t}(${t}, rank) VALUES ('automerge', 0)`).run();
    db.close();
    const third = await open(paused);
    await appendOneByOne(third);
    await third.close();
    expect(segments(paused)).not.toEqual(segments(control));
  });

  it("after a fork that throws mid-copy (alone or in a group): nothing written, setting and defensive mode restored", async () => {
    const path = await seeded(300);
    addFailingTrigger(path, "boom");
    const control = join(tempDir("hermes-fork-merge-"), "control.db");
    copyFileSync(path, control);
    const before = snapshot(path);

    const ctx = context(path);
    // Alone: the write unit is the whole transaction, rolled back.
    await expect(forkSession(ctx, "root", { newId: "boom" })).rejects.toThrow(/refused by test trigger/);
    expect(snapshot(path)).toBe(before);
    expect(() => ctx.conn.run("DELETE FROM messages_fts_config WHERE k = 'version'")).toThrow(
      /may not be modified/,
    );
    // In a group: the fork rolls back to its savepoint; the writes around it commit.
    const results = await groupOfThree(ctx, () => forkSession(ctx, "root", { newId: "boom" }));
    expect(results).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(ctx.writes.stats.writesPerGroupMax).toBe(2);
    expect(configRows(path)).toEqual(JSON.parse(before).config);
    ctx.conn.close();

    // The control file gets the same group with a middle write that fails before writing (same
    // savepoints, so the same FTS5 flushes); then 200 writes on both must leave the same
    // segments, which they would not if the failed forks had left merging paused.
    const other = context(control);
    const failing = () =>
      other.writes.run("fails", () => {
        throw new Error("fails before writing");
      });
    expect(await groupOfThree(other, failing)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(other.writes.stats.writesPerGroupMax).toBe(2);
    other.conn.close();
    const a = await open(path);
    await appendOneByOne(a);
    const b = await open(control);
    await appendOneByOne(b);
    await a.close();
    await b.close();
    expect(segments(path)).toEqual(segments(control));
    checkIndexes(path);
  });
});
