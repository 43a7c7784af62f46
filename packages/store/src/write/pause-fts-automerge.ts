import { objectExists } from "@hermes/schema";
import type { DatabaseConnection } from "../database-connection.js";

/** The FTS5 tables the reference's triggers write on every insert into `messages`. */
const TRIGGER_FED_FTS_TABLES = ["messages_fts", "messages_fts_trigram"] as const;

/** FTS5's `automerge` when `<table>_config` has no row for it (and for 1 or a value it refuses). */
const FTS5_DEFAULT_AUTOMERGE = 4;

/** FTS5's `usermerge` when `<table>_config` has no row for it. */
const FTS5_DEFAULT_USERMERGE = 4;

interface SavedSetting {
  readonly table: string;
  /** The `automerge` row as it was, or `undefined` when there was none (the usual case). */
  readonly row: AutomergeRow | undefined;
  /** The `usermerge` to put back, when it was raised; and whether the table had a row for it. */
  readonly usermerge?: { readonly value: number; readonly hadRow: boolean };
}

interface AutomergeRow {
  /** `quote(v)`: the stored value as an SQL literal, to write it back as it was. */
  readonly literal: string;
  readonly type: string;
  /** The value FTS5 reads from it (an integer, or digits in text), when within 0..64; else null. */
  readonly value: number | null;
}

/** What {@link pauseFtsAutomerge} paused, and how to put it back. */
export interface PausedMerging {
  /** The FTS5 tables whose merging was paused (a table whose `automerge` is 0 is not). */
  readonly tables: readonly string[];
  /** Puts each paused table's setting back exactly; idempotent. */
  readonly resume: () => void;
}

/**
 * Turns FTS5 incremental merging (`automerge`) off for the two FTS tables that the triggers on
 * `messages` fill, until `resume` is called; that puts each table's
 * setting back exactly: FTS5's value in this connection's memory, and the rows of
 * `<table>_config` as they were (no row when there was none, so the file stays identical to what
 * the reference expects). Call both inside the same write transaction: no other connection ever
 * sees the paused setting, and if the transaction rolls back the rows roll back with it (FTS5
 * then reloads its setting, since the structure cookie it bumped is rolled back too).
 *
 * Why: with `automerge` on, every flush of FTS5's pending terms (one per MiB of tokens) also
 * merges about as many pages of older segments per level of the index. Copying 100,000
 * messages in one transaction flushes a hundred times, and those merges were a large share of a
 * fork's time (docs/design/write-path.md). Paused, segments still merge when a level
 * reaches `crisismerge` (16) of them, so the index stays bounded; later writes, with `automerge`
 * back on, continue merging a little at a time.
 *
 * FTS5 only offers `INSERT INTO t(t, rank) VALUES('automerge', n)`, which always leaves a row;
 * removing that row again means writing a shadow table, which SQLite's defensive mode (on by
 * default in better-sqlite3) refuses, so it is lifted for exactly those statements. Lifting it
 * makes SQLite re-prepare every statement of the connection, which is nothing next to a fork but
 * too dear for small group transactions: `rowsExactly: false` skips that step, puts
 * the value back through FTS5 only (a file with no row keeps one holding FTS5's default, 4, which
 * FTS5 reads as before), and leaves alone a table whose row FTS5 could not write back as it is
 * (not an integer from 0 to 64).
 */
export function pauseFtsAutomerge(
  conn: DatabaseConnection,
  {
    rowsExactly = true,
    usermerge,
  }: {
    readonly rowsExactly?: boolean;
    /** Also raise `usermerge` to this while paused (put back as `automerge` is), if lower. */
    readonly usermerge?: number;
  } = {},
): PausedMerging {
  if (!conn.inTransaction) throw new Error("pauseFtsAutomerge must run inside a write transaction");
  const saved: SavedSetting[] = [];
  for (const table of TRIGGER_FED_FTS_TABLES) {
    if (!objectExists(conn, "table", table)) continue;
    const row = conn.get<AutomergeRow>(
      `SELECT literal, type, CASE WHEN n BETWEEN 0 AND 64 THEN n END AS value FROM (
         SELECT quote(v) AS literal, typeof(v) AS type, CASE
             WHEN typeof(v) = 'integer' THEN v
             WHEN typeof(v) = 'text' AND trim(v) GLOB '[0-9]*' AND NOT trim(v) GLOB '*[^0-9]*'
               THEN CAST(trim(v) AS INTEGER)
           END AS n
         FROM ${table}_config WHERE k = 'automerge')`,
    );
    if (row?.value === 0) continue; // merging is already off for this table
    if (!rowsExactly && row !== undefined && (row.type !== "integer" || row.value === null)) continue;
    conn.run(`INSERT INTO ${table}(${table}, rank) VALUES ('automerge', 0)`);
    saved.push({
      table,
      row,
      usermerge: usermerge === undefined ? undefined : raiseUsermerge(conn, table, usermerge),
    });
  }
  let restored = false;
  const resume = () => {
    if (restored) return;
    restored = true;
    // SQLite rolled the transaction back itself (I/O error, disk full): the rows went with it.
    if (saved.length === 0 || !conn.inTransaction) return;
    for (const { table, row, usermerge: raised } of saved) {
      if (raised !== undefined) {
        conn.run(`INSERT INTO ${table}(${table}, rank) VALUES ('usermerge', ${raised.value})`);
      }
      // The value FTS5 was using: the row's, or the default for no row (or one it refuses).
      const value = row?.value ?? FTS5_DEFAULT_AUTOMERGE;
      conn.run(`INSERT INTO ${table}(${table}, rank) VALUES ('automerge', ${value})`);
    }
    // An integer row is now back as it was; no row, or any other, needs the shadow table itself.
    const rewrite = rowsExactly
      ? saved.filter(
          (s) =>
            s.row === undefined ||
            s.row.type !== "integer" ||
            s.row.value === null ||
            s.usermerge?.hadRow === false,
        )
      : [];
    if (rewrite.length === 0) return;
    conn.db.unsafeMode(true);
    try {
      for (const { table, row, usermerge: raised } of rewrite) {
        if (raised?.hadRow === false) conn.run(`DELETE FROM ${table}_config WHERE k = 'usermerge'`);
        if (row !== undefined && row.type === "integer" && row.value !== null) continue;
        conn.run(`DELETE FROM ${table}_config WHERE k = 'automerge'`);
        if (row !== undefined) {
          conn.run(`INSERT INTO ${table}_config(k, v) VALUES ('automerge', ${row.literal})`);
        }
      }
    } finally {
      conn.db.unsafeMode(false);
    }
  };
  return { tables: saved.map((s) => s.table), resume };
}

/**
 * Raises the table's `usermerge` to `to` if it is lower: the value to put back, or undefined when
 * it was left alone (already as high, or a row FTS5 could not write back as it is: not an integer
 * from 2 to 16).
 */
function raiseUsermerge(
  conn: DatabaseConnection,
  table: string,
  to: number,
): { value: number; hadRow: boolean } | undefined {
  const row = conn.get<{ v: unknown }>(`SELECT v FROM ${table}_config WHERE k = 'usermerge'`);
  const value =
    row === undefined
      ? FTS5_DEFAULT_USERMERGE
      : typeof row.v === "number" && Number.isInteger(row.v) && row.v >= 2 && row.v <= 16
        ? row.v
        : undefined;
  if (value === undefined || value >= to) return undefined;
  conn.run(`INSERT INTO ${table}(${table}, rank) VALUES ('usermerge', ${to})`);
  return { value, hadRow: row !== undefined };
}
