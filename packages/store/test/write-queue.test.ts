import { join } from "node:path";
import { describe, expect, it } from "vitest";
// The queue itself (not part of the public surface): built code, as every test here.
import { DatabaseConnection } from "../dist/database-connection.js";
import { DEFAULT_WRITE_POLICY } from "../dist/write/write-policy.js";
import { WriteQueue } from "../dist/write/write-queue.js";
import { tempDir } from "./helpers/temp-dir.js";

function queue(options: Partial<typeof DEFAULT_WRITE_POLICY> = {}) {
  const conn = new DatabaseConnection(join(tempDir("hermes-queue-"), "q.db"), {
    busyTimeoutMs: 5,
    synchronous: "FULL",
    journalSizeLimit: 1 << 20,
    readOnly: false,
  });
  conn.db.pragma("journal_mode = WAL");
  conn.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)");
  const writes = new WriteQueue(conn, { ...DEFAULT_WRITE_POLICY, ...options });
  const values = () => conn.all<{ v: string }>("SELECT v FROM t ORDER BY id").map((r) => r.v);
  return { conn, writes, values };
}

describe("WriteQueue", () => {
  it("lets timers run while a caller awaits one write after another (the event loop is not starved)", async () => {
    const q = queue();
    let ticks = 0;
    const interval = setInterval(() => ticks++, 1);
    try {
      // Each promise settles inside the next call: without a yield the whole chain runs in the
      // microtask queue and the interval never fires (0 ticks for 1,000 appends before the fix).
      for (let i = 0; i < 1500; i++)
        await q.writes.run("insert", () => q.conn.exec(`INSERT INTO t (v) VALUES ('${i}')`));
    } finally {
      clearInterval(interval);
    }
    expect(ticks).toBeGreaterThanOrEqual(5);
    expect(q.values()).toEqual(Array.from({ length: 1500 }, (_, i) => String(i)));
    expect(q.writes.stats).toMatchObject({ writes: 1500, failedWrites: 0 });
    q.conn.close();
  });

  it("applies writes in call order; each fn runs inside a transaction", async () => {
    const { conn, writes, values } = queue();
    const inTx: boolean[] = [];
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        writes.run("insert", () => {
          inTx.push(conn.inTransaction);
          conn.run("INSERT INTO t (v) VALUES (?)", [`v${i}`]);
          return i;
        }),
      ),
    );
    expect(values()).toEqual(Array.from({ length: 30 }, (_, i) => `v${i}`));
    expect(inTx.every(Boolean)).toBe(true);
    conn.close();
  });

  it("an error thrown by one write of a group rejects it alone, with its own error object", async () => {
    const { conn, writes, values } = queue();
    class Custom extends Error {}
    const custom = new Custom("mine");
    const results = await Promise.allSettled([
      writes.run("a", () => conn.run("INSERT INTO t (v) VALUES ('a')")),
      writes.run("b", () => {
        conn.run("INSERT INTO t (v) VALUES ('b')");
        throw custom; // after writing: its row must go too
      }),
      writes.run("dup", () => conn.run("INSERT INTO t (v) VALUES ('a')")), // UNIQUE violation
      writes.run("c", () => conn.run("INSERT INTO t (v) VALUES ('c')")),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toBe(custom);
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_CONSTRAINT_UNIQUE" });
    expect(values()).toEqual(["a", "c"]);
    expect(conn.inTransaction).toBe(false);
    conn.close();
  });

  it("refuses a write unit that returns a promise (no await inside a transaction)", async () => {
    const { conn, writes, values } = queue();
    await expect(
      writes.run("async", () => {
        conn.run("INSERT INTO t (v) VALUES ('x')");
        return Promise.resolve(1);
      }),
    ).rejects.toThrow(/must be synchronous/);
    expect(values()).toEqual([]);
    conn.close();
  });

  it("exclusive() runs alone, outside any transaction, in its place in the queue (e.g. VACUUM)", async () => {
    const { conn, writes, values } = queue();
    const seen: string[] = [];
    const done = await Promise.all([
      writes.run("before", () => conn.run("INSERT INTO t (v) VALUES ('before')")),
      writes.exclusive("vacuum", () => {
        seen.push(`inTransaction=${conn.inTransaction} rows=${values().length}`);
        conn.exec("VACUUM"); // SQLite refuses VACUUM inside a transaction
        return "vacuumed";
      }),
      writes.run("after", () => conn.run("INSERT INTO t (v) VALUES ('after')")),
    ]);
    expect(done[1]).toBe("vacuumed");
    expect(seen).toEqual(["inTransaction=false rows=1"]);
    expect(values()).toEqual(["before", "after"]);
    await writes.whenIdle();
    conn.close();
  });

  it("retries only busy/locked errors: another connection's lock is waited out, other errors are not retried", async () => {
    const { conn, writes, values } = queue({ deadlineMs: 5000 });
    const other = new (conn.db.constructor as typeof import("better-sqlite3"))(conn.path, { timeout: 0 });
    other.exec("BEGIN IMMEDIATE");
    let runs = 0;
    const waiting = writes.run("waits", () => {
      runs++;
      conn.run("INSERT INTO t (v) VALUES ('waited')");
    });
    await new Promise((r) => setTimeout(r, 150));
    expect(writes.stats.busyErrors).toBeGreaterThan(0);
    expect(runs).toBe(0); // BEGIN IMMEDIATE never got through: the unit did not run half-way
    other.exec("COMMIT");
    await waiting;
    expect(runs).toBe(1);
    expect(values()).toEqual(["waited"]);
    let failing = 0;
    await expect(
      writes.run("bad", () => {
        failing++;
        conn.run("INSERT INTO nowhere VALUES (1)");
      }),
    ).rejects.toMatchObject({ code: "SQLITE_ERROR" });
    expect(failing).toBe(1);
    other.close();
    conn.close();
  });

  it("retries a write that met SQLITE_BUSY_SNAPSHOT (or SQLITE_LOCKED) from scratch, rolled back in between", async () => {
    for (const code of ["SQLITE_BUSY_SNAPSHOT", "SQLITE_LOCKED_SHAREDCACHE"]) {
      const { conn, writes, values } = queue();
      let runs = 0;
      const value = await writes.run("snapshot", () => {
        runs++;
        conn.run("INSERT INTO t (v) VALUES (?)", [`run${runs}`]);
        // As a stale read snapshot would: the first run fails after writing.
        if (runs === 1) throw Object.assign(new Error("database is locked"), { code });
        return "done";
      });
      expect(value).toBe("done");
      expect(runs).toBe(2);
      expect(values()).toEqual(["run2"]); // the first run's row was rolled back
      expect(writes.stats).toMatchObject({ retries: 1, busyErrors: 1, writes: 1, failedWrites: 0 });
      conn.close();
    }
  });

  describe("merged writes", () => {
    /** An insert of `v` that can merge with its neighbours; records every `many` call. */
    function mergeable(q: ReturnType<typeof queue>, many: (items: readonly string[]) => string[]) {
      const calls: string[][] = [];
      const insert = (v: string) =>
        q.writes.run(
          "insert",
          () => {
            q.conn.run("INSERT INTO t (v) VALUES (?)", [v]);
            return `one:${v}`;
          },
          {
            key: "insert",
            item: v,
            many: (items) => {
              calls.push([...(items as string[])]);
              return many(items as string[]);
            },
          },
        );
      return { calls, insert };
    }

    it("consecutive mergeable writes of a group go through one `many` call; each promise gets its own result", async () => {
      const q = queue();
      const { calls, insert } = mergeable(q, (items) =>
        items.map((v) => {
          q.conn.run("INSERT INTO t (v) VALUES (?)", [v]);
          return `many:${v}`;
        }),
      );
      // The first write commits alone, inside its call; the others queue up behind it as one group.
      const results = await Promise.all([
        insert("a"),
        insert("b"),
        insert("c"),
        q.writes.run("other", () => q.conn.run("INSERT INTO t (v) VALUES ('x')") && "x"),
        insert("d"),
        insert("e"),
      ]);
      expect(results).toEqual(["one:a", "many:b", "many:c", "x", "many:d", "many:e"]);
      // Only neighbours merge: the write in between keeps its place in the order.
      expect(calls).toEqual([
        ["b", "c"],
        ["d", "e"],
      ]);
      expect(q.values()).toEqual(["a", "b", "c", "x", "d", "e"]);
      expect(q.writes.stats).toMatchObject({ writes: 6, groupsCommitted: 2, failedWrites: 0 });
      q.conn.close();
    });

    it("a merged write that fails is rolled back and its writes run one by one: only the failing one rejects", async () => {
      const q = queue();
      q.conn.run("INSERT INTO t (v) VALUES ('taken')");
      const { calls, insert } = mergeable(q, (items) =>
        items.map((v) => {
          q.conn.run("INSERT INTO t (v) VALUES (?)", [v]); // 'taken' breaks the UNIQUE constraint
          return `many:${v}`;
        }),
      );
      const results = await Promise.allSettled([insert("a"), insert("b"), insert("taken"), insert("c")]);
      expect(results.map((r) => (r.status === "fulfilled" ? r.value : r.status))).toEqual([
        "one:a",
        "one:b",
        "rejected",
        "one:c",
      ]);
      expect((results[2] as PromiseRejectedResult).reason).toMatchObject({
        code: "SQLITE_CONSTRAINT_UNIQUE",
      });
      expect(calls).toEqual([["b", "taken", "c"]]);
      // 'b' was written by the failed merged statement too: that row is gone, only its own run's is kept.
      expect(q.values()).toEqual(["taken", "a", "b", "c"]);
      expect(q.writes.stats).toMatchObject({ writes: 3, failedWrites: 1, groupsCommitted: 2 });
      expect(q.conn.inTransaction).toBe(false);
      q.conn.close();
    });

    it("a merged write that loses the whole transaction: the group runs again, those writes one by one", async () => {
      const q = queue();
      const { calls, insert } = mergeable(q, (items) => {
        for (const v of items) q.conn.run("INSERT INTO t (v) VALUES (?)", [v]);
        // As SQLite does on some errors (disk full, I/O): the whole transaction is rolled back.
        q.conn.exec("ROLLBACK");
        throw new Error("transaction lost");
      });
      const results = await Promise.all([
        q.writes.run("other", () => q.conn.run("INSERT INTO t (v) VALUES ('first')") && "first"),
        q.writes.run("other", () => q.conn.run("INSERT INTO t (v) VALUES ('before')") && "before"),
        insert("b"),
        insert("c"),
      ]);
      // Each promise has the result of the run that committed, and every row is there once.
      expect(results).toEqual(["first", "before", "one:b", "one:c"]);
      expect(calls).toEqual([["b", "c"]]);
      expect(q.values()).toEqual(["first", "before", "b", "c"]);
      expect(q.writes.stats).toMatchObject({ writes: 4, failedWrites: 0, groupsCommitted: 2 });
      q.conn.close();
    });
  });
});
