import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
// The queue and the pacing are internals: built code, as every queue test here.
import { DatabaseConnection } from "../dist/database-connection.js";
import type { MergePacing } from "../dist/write/merge-pacing.js";
import {
  MERGE_PAGES_PER_TRANSACTION,
  PACED_USERMERGE,
  referenceSearchMergePacing,
} from "../dist/write/search-merge-pacing.js";
import { DEFAULT_WRITE_POLICY } from "../dist/write/write-policy.js";
import { WriteQueue } from "../dist/write/write-queue.js";
import { tempDir } from "./helpers/temp-dir.js";

const TABLES = ["messages_fts", "messages_fts_trigram"] as const;
const opened: DatabaseConnection[] = [];
afterEach(() => {
  for (const conn of opened.splice(0)) conn.close();
});

/** A reference-schema file with session `s`, and a write queue on it with the given pacing. */
async function setup(pacing: (conn: DatabaseConnection) => MergePacing | undefined) {
  const path = join(tempDir("hermes-pacing-"), "state.db");
  const store = await openSessionStore({ path });
  await store.createSession({ id: "s", source: "cli" });
  await store.close();
  const conn = new DatabaseConnection(path, {
    busyTimeoutMs: 5,
    synchronous: "NORMAL",
    journalSizeLimit: 1 << 20,
    readOnly: false,
  });
  opened.push(conn);
  const writes = new WriteQueue(
    conn,
    DEFAULT_WRITE_POLICY,
    () => 0,
    undefined,
    undefined,
    undefined,
    pacing(conn),
  );
  let n = 0;
  /** Each insert's reading of `usermerge`, in order. */
  const usermergeSeen: Array<Record<string, unknown>> = [];
  /** Inserts one message (its FTS5 rows come from the reference's triggers) and reads `automerge` meanwhile. */
  const insert = () =>
    writes.run("append", () => {
      conn.run("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', ?, 1)", [
        `message ${n++} about pacing the merges of segment number ${n * 7919}`,
      ]);
      usermergeSeen.push(setting(conn, "usermerge"));
      return setting(conn, "automerge");
    });
  /**
   * `n` inserts made while another connection holds the write lock: they wait for it together
   * and commit as one group.
   */
  const grouped = async (n: number) => {
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    const inserts = Array.from({ length: n }, () => insert());
    await sleep(5);
    other.exec("COMMIT");
    other.close();
    const seen = await Promise.all(inserts);
    return seen;
  };
  return { conn, writes, insert, grouped, usermergeSeen };
}

/** Each table's row for an FTS5 option in its config (undefined: none, FTS5 uses its default). */
function setting(conn: DatabaseConnection, key: "automerge" | "usermerge"): Record<string, unknown> {
  return Object.fromEntries(
    TABLES.map((t) => [t, conn.get<{ v: unknown }>(`SELECT v FROM ${t}_config WHERE k = '${key}'`)?.v]),
  );
}

const automerge = (conn: DatabaseConnection) => setting(conn, "automerge");

/** Sets a table's FTS5 option through FTS5 itself. */
function setOption(conn: DatabaseConnection, table: string, option: string, value: number): void {
  conn.exec(`INSERT INTO ${table}(${table}, rank) VALUES ('${option}', ${value})`);
}

function segments(conn: DatabaseConnection, table: string): number {
  return Number(conn.get<{ n: number }>(`SELECT count(DISTINCT segid) AS n FROM ${table}_idx`)?.n);
}

describe("search index merge pacing", { timeout: 120_000 }, () => {
  it("a group of writes runs with FTS5 merging held off, and commits the file's setting back", async () => {
    const { conn, insert, grouped, usermergeSeen } = await setup(referenceSearchMergePacing);
    // A lone write is not paced: it sees the file as it is (no automerge row, FTS5's default).
    expect(await insert()).toEqual({ messages_fts: undefined, messages_fts_trigram: undefined });
    // Writes that waited for the lock together are one group: paced.
    const inside = await grouped(3);
    for (const seen of inside) expect(seen).toEqual({ messages_fts: 0, messages_fts_trigram: 0 });
    // Its merging waits for 8 segments on a level (FTS5's default is 4).
    expect(usermergeSeen).toEqual([
      { messages_fts: undefined, messages_fts_trigram: undefined },
      ...inside.map(() => ({ messages_fts: PACED_USERMERGE, messages_fts_trigram: PACED_USERMERGE })),
    ]);
    expect(setting(conn, "usermerge")).toEqual({ messages_fts: 4, messages_fts_trigram: 4 });
    // After the commit FTS5 reads the value it used before, its default; FTS5's own command
    // leaves that in a row (removing the row would re-prepare every statement, see the pacing).
    expect(automerge(conn)).toEqual({ messages_fts: 4, messages_fts_trigram: 4 });
    expect(conn.get<{ n: number }>("SELECT count(*) AS n FROM messages")?.n).toBe(4);
    for (const t of TABLES)
      expect(() => conn.exec(`INSERT INTO ${t}(${t}) VALUES ('integrity-check')`)).not.toThrow();
  });

  it("keeps each table's own setting, and leaves merging off where its owner turned it off", async () => {
    const { conn, grouped, usermergeSeen } = await setup(referenceSearchMergePacing);
    setOption(conn, "messages_fts", "automerge", 8);
    setOption(conn, "messages_fts", "usermerge", 2);
    setOption(conn, "messages_fts_trigram", "automerge", 0);
    for (let round = 0; round < 5; round++) {
      const inside = await grouped(2);
      for (const seen of inside) expect(seen).toEqual({ messages_fts: 0, messages_fts_trigram: 0 });
      expect(automerge(conn)).toEqual({ messages_fts: 8, messages_fts_trigram: 0 });
      expect(setting(conn, "usermerge")).toEqual({ messages_fts: 2, messages_fts_trigram: undefined });
    }
    for (const seen of usermergeSeen)
      expect(seen).toEqual({ messages_fts: 8, messages_fts_trigram: undefined });
  });

  it("leaves alone a table whose automerge row FTS5 could not write back as it is", async () => {
    const { conn, grouped } = await setup(referenceSearchMergePacing);
    // A row another tool wrote as text: FTS5 reads it as 6, but would write it back as an integer.
    conn.db.unsafeMode(true);
    conn.exec("INSERT INTO messages_fts_trigram_config (k, v) VALUES ('automerge', '6')");
    conn.db.unsafeMode(false);
    const inside = await grouped(2);
    for (const seen of inside) expect(seen).toEqual({ messages_fts: 0, messages_fts_trigram: "6" });
    expect(automerge(conn)).toEqual({ messages_fts: 4, messages_fts_trigram: "6" });
  });

  it("spreads the merging: paced groups keep the index as compact as holding merges off does not", async () => {
    // The same 400 groups of 4 messages, paced, and with FTS5's merging only held off.
    const holdOnly = (conn: DatabaseConnection): MergePacing => ({
      hold: () => {
        for (const t of TABLES) setOption(conn, t, "automerge", 0);
      },
      release: () => {
        for (const t of TABLES) setOption(conn, t, "automerge", 4);
      },
    });
    const counts: Record<string, number[]> = {};
    for (const [name, pacing] of [
      ["paced", referenceSearchMergePacing],
      ["held only", holdOnly],
    ] as const) {
      const { conn, writes, grouped } = await setup(pacing);
      for (let g = 0; g < 400; g++) await grouped(4);
      expect(writes.stats.groupsCommitted).toBe(400);
      counts[name] = TABLES.map((t) => segments(conn, t));
      for (const t of TABLES) conn.exec(`INSERT INTO ${t}(${t}) VALUES ('integrity-check')`);
      // Every message is found, whatever the segments.
      expect(
        conn.get<{ n: number }>("SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH 'pacing'")
          ?.n,
      ).toBe(1600);
    }
    const [paced, held] = [counts.paced as number[], counts["held only"] as number[]];
    // Held only, the segments pile up until FTS5's crisis merge (16 on a level) kicks in.
    for (let i = 0; i < TABLES.length; i++) expect(paced[i]).toBeLessThan(held[i] as number);
    expect(MERGE_PAGES_PER_TRANSACTION).toBeGreaterThan(0);
  });

  it("a setting it cannot put back: nothing of that transaction commits, and each write is made once, unpaced", async () => {
    let releases = 0;
    const { conn, writes, grouped } = await setup((c) => {
      const real = referenceSearchMergePacing(c);
      return {
        hold: real.hold,
        release: () => {
          releases++;
          throw new Error("cannot restore automerge");
        },
      };
    });
    const inside = await grouped(3);
    expect(releases).toBe(1);
    // Re-run without pacing: the writes saw the file's own setting (none), and it is unchanged.
    for (const seen of inside)
      expect(seen).toEqual({ messages_fts: undefined, messages_fts_trigram: undefined });
    expect(automerge(conn)).toEqual({ messages_fts: undefined, messages_fts_trigram: undefined });
    expect(conn.get<{ n: number }>("SELECT count(*) AS n FROM messages")?.n).toBe(3);
    expect(writes.stats).toMatchObject({ writes: 3, failedWrites: 0 });
    // Pacing stays off for this queue from then on.
    await grouped(2);
    expect(releases).toBe(1);
  });

  it("a pacing that fails to start never fails a write: the group is made once, unpaced", async () => {
    let holds = 0;
    const { conn, writes, grouped } = await setup(() => ({
      hold: () => {
        holds++;
        throw new Error("cannot pause merging");
      },
      release: () => {
        throw new Error("never reached");
      },
    }));
    const inside = await grouped(3);
    for (const seen of inside)
      expect(seen).toEqual({ messages_fts: undefined, messages_fts_trigram: undefined });
    await grouped(2);
    expect(holds).toBe(1);
    expect(conn.get<{ n: number }>("SELECT count(*) AS n FROM messages")?.n).toBe(5);
    expect(writes.stats).toMatchObject({ writes: 5, failedWrites: 0 });
  });
});
