import { readdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { HermesStoreError, openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
// The building blocks themselves (not part of the public surface): built code.
import { DatabaseConnection } from "../dist/database-connection.js";
import { HandoffQueue } from "../dist/write/handoff-queue.js";
import { SharedCommits } from "../dist/write/shared-commits.js";
import { tempDir } from "./helpers/temp-dir.js";

// Group commit across processes (shareCommits, default on): a writer waiting for the lock posts
// its appends in `<db>-writers/`, and the store that takes the lock commits them with a receipt.
// Two stores in one process have two slots in the queue, exactly like two processes; their
// interleaving is driven here by hand so each path is taken for certain:
// - a raw connection holds the write lock, so a store's append waits and posts its request;
// - after the waiter has waited longer than the queue's long-wait bound (100 ms), another store
//   races for the lock, and its first attempt runs synchronously inside its call: releasing the
//   raw lock and calling it in the same tick makes it the next holder, before any timer runs;
// - a waiter whose writes run on a writer thread polls from that thread, which no tick of this
//   one holds back, so where the holder must be `a`, the test announces a holder in the queue
//   first (`announcedHolder`): the waiter then posts and waits to be woken, as behind any holder.

const stores: SessionStore[] = [];
const raws: Database.Database[] = [];
afterEach(async () => {
  for (const raw of raws.splice(0)) {
    if (raw.inTransaction) raw.exec("ROLLBACK");
    raw.close();
  }
  for (const store of stores.splice(0)) await store.close();
});

/** Two stores on one file: `a` commits on its caller's thread, `b` (the waiter that posts) with `writer`. */
async function twoStores(options: { writeDeadlineMs?: number; writer?: "inline" | "thread" } = {}) {
  const { writer, ...rest } = options;
  const path = join(tempDir("hermes-shared-"), "state.db");
  const a = await openSessionStore({ path, ...rest });
  const b = await openSessionStore({ path, ...rest, ...(writer === undefined ? {} : { writer }) });
  stores.push(a, b);
  await a.createSession({ id: "sa", source: "cli" });
  await a.createSession({ id: "sb", source: "cli" });
  const raw = new Database(path);
  raw.pragma("busy_timeout = 0");
  raws.push(raw);
  return { path, a, b, raw, dir: `${path}-writers` };
}

/**
 * A slot of the writers' queue that says "I hold the lock", kept fresh until `end()`: writers
 * of the file post their appends and wait to be woken instead of trying the lock themselves.
 */
function announcedHolder(path: string): { end(): void } {
  const turns = HandoffQueue.open(path);
  if (turns === undefined) throw new Error(`no writers' queue beside ${path}`);
  turns.hold();
  const heartbeat = setInterval(() => turns.hold(), 10);
  return {
    end() {
      clearInterval(heartbeat);
      turns.close();
    },
  };
}

function filesIn(dir: string, prefix: string): string[] {
  return readdirSync(dir).filter((name) => name.startsWith(prefix));
}

/** Resolves once a file with `prefix` appears in `dir` (the waiter has posted). */
async function posted(dir: string, prefix = "req-"): Promise<string> {
  for (let i = 0; i < 2_000; i++) {
    const [name] = filesIn(dir, prefix);
    if (name !== undefined) return name;
    await sleep(5);
  }
  throw new Error(`no ${prefix} file appeared in ${dir}`);
}

function rows(path: string): Array<{ id: number; session_id: string; content: string }> {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT id, session_id, content FROM messages ORDER BY id").all() as Array<{
      id: number;
      session_id: string;
      content: string;
    }>;
  } finally {
    db.close();
  }
}

function messageCount(path: string, id: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT message_count FROM sessions WHERE id = ?").pluck().get(id) as number;
  } finally {
    db.close();
  }
}

// The waiting store `b` posts from its caller's thread or from its writer thread (its receipt, its
// counters and its errors come back the same way). The holder `a` stays on its caller's thread:
// these cases make it the next holder by calling it in the tick the raw lock is released, which
// a call posted to a thread cannot promise.
describe.each(["inline", "thread"] as const)(
  "shared commits: the lock holder commits what other stores posted (poster's writer: %s)",
  (writer) => {
    const fixture = (options: { writeDeadlineMs?: number } = {}) => twoStores({ ...options, writer });
    it("commits a waiting store's append in the holder's transaction, once, and returns its id", async () => {
      const { path, a, b, raw, dir } = await fixture();
      raw.exec("BEGIN IMMEDIATE");
      const holder = announcedHolder(path);
      const waiting = b.appendMessage({ sessionId: "sb", role: "user", content: "posted by b" });
      await posted(dir);
      await sleep(150); // past the long-wait bound: a races instead of queueing behind b
      const groupsBefore = a.stats().groupsCommitted;
      raw.exec("ROLLBACK");
      const own = a.appendMessage({ sessionId: "sa", role: "user", content: "written by a" });
      const [ownId, postedId] = await Promise.all([own, waiting]);
      holder.end();

      expect(a.stats().servedWrites).toBe(1);
      expect(b.stats().sharedWrites).toBe(1);
      expect(b.stats().writes).toBe(1); // counted once, in the store that made the call
      expect(b.stats().groupsCommitted).toBe(0);
      expect(a.stats().groupsCommitted - groupsBefore).toBe(1); // both rows, one transaction
      const stored = rows(path);
      expect(stored).toEqual([
        { id: ownId, session_id: "sa", content: "written by a" },
        { id: postedId, session_id: "sb", content: "posted by b" },
      ]);
      expect(messageCount(path, "sb")).toBe(1);
      expect(filesIn(dir, "req-")).toEqual([]);
      expect(filesIn(dir, "claim-")).toEqual([]);
      // The posted append is searchable like any other (the same statement, the same triggers).
      expect((await a.searchMessages("posted")).map((hit) => hit.id)).toEqual([postedId]);
    });

    it("keeps only each owner's latest receipt (an acknowledged receipt is deleted)", async () => {
      const { path, a, b, raw, dir } = await fixture();
      for (let round = 1; round <= 3; round++) {
        raw.exec("BEGIN IMMEDIATE");
        const holder = announcedHolder(path);
        const waiting = b.appendMessage({ sessionId: "sb", role: "user", content: `b${round}` });
        await posted(dir);
        await sleep(150);
        raw.exec("ROLLBACK");
        await Promise.all([
          a.appendMessage({ sessionId: "sa", role: "user", content: `a${round}` }),
          waiting,
        ]);
        holder.end();
      }
      expect(b.stats().sharedWrites).toBe(3);
      await b.appendMessage({ sessionId: "sb", role: "user", content: "b alone" });
      // 4 writes, 3 of them committed by a: b's own transaction held 1.
      expect(b.stats()).toMatchObject({ writes: 4, groupsCommitted: 1, writesPerGroupMean: 1 });
      const db = new Database(path, { readonly: true });
      const receipts = db.prepare("SELECT seq FROM hermes_write_receipts").pluck().all();
      db.close();
      expect(receipts).toEqual([3]);
    });

    it("gives a request the holder cannot apply back to its owner, which meets its own typed error", async () => {
      const { path, a, b, raw, dir } = await fixture();
      raw.exec("BEGIN IMMEDIATE");
      const holder = announcedHolder(path);
      const failing = b.appendMessage({ sessionId: "no-such-session", role: "user", content: "lost?" });
      const outcome = failing.then(
        () => "resolved",
        (error: unknown) => error,
      );
      await posted(dir);
      await sleep(150);
      raw.exec("ROLLBACK");
      await a.appendMessage({ sessionId: "sa", role: "user", content: "fine" });
      holder.end(); // declined by a, the request goes back to b, which takes the lock itself
      const error = await outcome;
      expect(error).toBeInstanceOf(HermesStoreError);
      expect((error as HermesStoreError).code).toBe("SESSION_NOT_FOUND");
      expect(a.stats().servedWrites).toBe(0); // declined there, not written
      expect(b.stats().sharedWrites).toBe(0);
      expect(rows(path).map((r) => r.content)).toEqual(["fine"]);
      const db = new Database(path, { readonly: true });
      const receipts = db.prepare("SELECT result FROM hermes_write_receipts").pluck().all();
      db.close();
      expect(receipts).toEqual([JSON.stringify({ declined: true })]); // it was a's to decline
      // b still writes normally afterwards.
      await b.appendMessage({ sessionId: "sb", role: "user", content: "after" });
      expect(rows(path).map((r) => r.content)).toEqual(["fine", "after"]);
    });

    it("withdraws a posted request at the deadline: STORE_BUSY, and nothing of it is ever written", async () => {
      const { path, a, b, raw, dir } = await fixture({ writeDeadlineMs: 300 });
      raw.exec("BEGIN IMMEDIATE");
      const outcome = b.appendMessage({ sessionId: "sb", role: "user", content: "too late" }).then(
        () => "resolved",
        (error: unknown) => error,
      );
      await posted(dir);
      const error = await outcome;
      expect((error as HermesStoreError).code).toBe("STORE_BUSY");
      expect(filesIn(dir, "req-")).toEqual([]); // withdrawn: no holder can claim it any more
      raw.exec("ROLLBACK");
      await a.appendMessage({ sessionId: "sa", role: "user", content: "later" });
      expect(a.stats().servedWrites).toBe(0);
      expect(rows(path).map((r) => r.content)).toEqual(["later"]);
      expect(messageCount(path, "sb")).toBe(0);
    });

    it("writes a request itself when its claim has no receipt (the holder died before COMMIT)", async () => {
      const { path, b, raw, dir } = await fixture();
      raw.exec("BEGIN IMMEDIATE");
      const waiting = b.appendMessage({ sessionId: "sb", role: "user", content: "orphaned" });
      const name = await posted(dir);
      // A holder claims the request, then dies with its transaction: the claim stays behind.
      renameSync(join(dir, name), join(dir, name.replace(/^req-/, "claim-")));
      raw.exec("ROLLBACK");
      const id = await waiting;
      expect(rows(path)).toEqual([{ id, session_id: "sb", content: "orphaned" }]);
      expect(messageCount(path, "sb")).toBe(1);
      expect(filesIn(dir, "claim-")).toEqual([]);
      expect(b.stats().sharedWrites).toBe(0);
    });

    it("takes the receipt's word when the holder committed and died before waking the owner", async () => {
      const { path, b, raw, dir } = await fixture();
      raw.exec("BEGIN IMMEDIATE");
      const waiting = b.appendMessage({ sessionId: "sb", role: "user", content: "committed elsewhere" });
      const name = await posted(dir);
      // A holder claims it, writes the row and the receipt in its transaction, commits, and dies.
      const claim = join(dir, name.replace(/^req-/, "claim-"));
      renameSync(join(dir, name), claim);
      const body = JSON.parse(readFileSync(claim, "utf8")) as {
        owner: string;
        seq: number;
        items: Array<{ row: { session_id: string; role: string; content: string } }>;
      };
      expect(body.items).toHaveLength(1);
      const row = body.items[0]?.row;
      const id = Number(
        raw
          .prepare("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)")
          .run(row?.session_id, row?.role, row?.content, Date.now() / 1000).lastInsertRowid,
      );
      raw.prepare("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?").run(row?.session_id);
      raw.exec(
        "CREATE TABLE IF NOT EXISTS hermes_write_receipts (owner TEXT NOT NULL, seq INTEGER NOT NULL, " +
          "result TEXT NOT NULL, written_at REAL NOT NULL, PRIMARY KEY (owner, seq)) WITHOUT ROWID",
      );
      raw
        .prepare("INSERT INTO hermes_write_receipts VALUES (?, ?, ?, ?)")
        .run(body.owner, body.seq, JSON.stringify({ values: [id] }), Date.now() / 1000);
      raw.exec("COMMIT");
      expect(await waiting).toBe(id);
      expect(rows(path)).toEqual([{ id, session_id: "sb", content: "committed elsewhere" }]);
      expect(b.stats().sharedWrites).toBe(1);
      expect(filesIn(dir, "claim-")).toEqual([]);
    });

    it("posts nothing with shareCommits: false, and leaves a file written by one store untouched", async () => {
      const path = join(tempDir("hermes-shared-"), "state.db");
      const a = await openSessionStore({ path, shareCommits: false });
      const b = await openSessionStore({ path, shareCommits: false, writer });
      stores.push(a, b);
      await a.createSession({ id: "s", source: "cli" });
      const raw = new Database(path);
      raw.pragma("busy_timeout = 0");
      raws.push(raw);
      raw.exec("BEGIN IMMEDIATE");
      const waiting = b.appendMessage({ sessionId: "s", role: "user", content: "mine" });
      await sleep(150);
      expect(filesIn(`${path}-writers`, "req-")).toEqual([]);
      raw.exec("ROLLBACK");
      await Promise.all([a.appendMessage({ sessionId: "s", role: "user", content: "a" }), waiting]);
      expect(a.stats().servedWrites + b.stats().sharedWrites).toBe(0);
      const db = new Database(path, { readonly: true });
      const table = db.prepare("SELECT name FROM sqlite_master WHERE name = 'hermes_write_receipts'").get();
      db.close();
      expect(table).toBeUndefined();
    });
  },
);

describe("shared commits: the building blocks", () => {
  it("settles from the receipt, not by writing again, when the owner gets the lock after a holder committed", async () => {
    const { path } = await twoStores();
    const pragmas = { busyTimeoutMs: 0, synchronous: "FULL", journalSizeLimit: -1, readOnly: false } as const;
    const open = () => {
      const conn = new DatabaseConnection(path, pragmas);
      const turns = HandoffQueue.open(path) as HandoffQueue;
      const shared = new SharedCommits(turns, conn);
      let n = 0;
      shared.register("note", (items: readonly unknown[]) =>
        items.map((item) => {
          conn.db
            .prepare(
              "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('sa', 'user', ?, 0)",
            )
            .run(String(item));
          return ++n;
        }),
      );
      return { conn, turns, shared };
    };
    const owner = open();
    const holder = open();
    try {
      expect(owner.shared.post("note", ["x", "y"], 60_000)).toBe(true);
      holder.conn.db.exec("BEGIN IMMEDIATE");
      const serving = holder.shared.serve(256);
      expect(serving.lost).toBe(false);
      holder.conn.db.exec("COMMIT");
      holder.shared.committed(serving.claimed);
      // The owner holds the lock next, before it looked for a receipt outside it.
      owner.conn.db.exec("BEGIN IMMEDIATE");
      expect(owner.shared.settleInLock()).toEqual({ applied: true, values: [1, 2] });
      owner.conn.db.exec("ROLLBACK");
      expect(rows(path).map((r) => r.content)).toEqual(["x", "y"]);
      expect(owner.shared.postedCount).toBeUndefined();
      // A request nobody served: under the lock, no receipt means never written, and it is
      // withdrawn for good (a later holder finds nothing to claim).
      expect(owner.shared.post("note", ["z"], 60_000)).toBe(true);
      owner.conn.db.exec("BEGIN IMMEDIATE");
      expect(owner.shared.settleInLock()).toBe("withdrawn");
      owner.conn.db.exec("ROLLBACK");
      holder.conn.db.exec("BEGIN IMMEDIATE");
      expect(holder.shared.serve(256).claimed).toEqual([]);
      holder.conn.db.exec("ROLLBACK");
      expect(rows(path).map((r) => r.content)).toEqual(["x", "y"]);
    } finally {
      for (const side of [owner, holder]) {
        side.turns.close();
        side.conn.close();
      }
    }
  });
});
