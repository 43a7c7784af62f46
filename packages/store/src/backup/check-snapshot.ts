import Database from "better-sqlite3";

/** What a snapshot holds and how its checks went (sync: it runs on the backup thread). */
export interface SnapshotCheck {
  /** `PRAGMA integrity_check`'s answer: `["ok"]` when the file is sound. */
  integrity: string[];
  /** The FTS5 `integrity-check` of each full-text table: `ok`, `skipped: why`, or the error. */
  fts: Array<{ table: string; result: string }>;
  /** Rows of every ordinary table (`sessions`, `messages`, …), by name. */
  counts: Record<string, number>;
  /** `schema_version`'s value; `null` when the file has none (not a Hermes file yet). */
  schemaVersion: number | null;
  /** `PRAGMA application_id` (the agent's generation stamp; 0 when unset). */
  applicationId: number;
  /** `state_meta.db_file_generation`, where the file has it. */
  generation: string | null;
  /** `wal` or `delete`, as the file's header records it. */
  journalMode: "wal" | "delete";
  pageSize: number;
}

/** Whether the check found the file sound: integrity `ok` and no FTS table failing. */
export function snapshotSound(check: SnapshotCheck): boolean {
  return (
    check.integrity.length === 1 &&
    check.integrity[0] === "ok" &&
    check.fts.every((f) => f.result === "ok" || f.result.startsWith("skipped"))
  );
}

/** The tables FTS5 keeps for each full-text table (its own storage, not rows of the file). */
const SHADOW_SUFFIXES = ["data", "idx", "content", "docsize", "config"];

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Markers by which the agent says an index is knowingly behind its rows (a rebuild under way or
 * owed): checking such an index would report the agent's own plan as damage.
 */
function staleMarkers(db: Database.Database): string[] {
  try {
    const rows = db
      .prepare(
        "SELECT key FROM state_meta WHERE (key LIKE 'fts%stale' OR key LIKE 'fts%rebuild%') AND value NOT IN ('', '0')",
      )
      .pluck()
      .all() as string[];
    return rows;
  } catch {
    return [];
  }
}

function ftsChecks(db: Database.Database): SnapshotCheck["fts"] {
  const tables = db
    .prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%' ORDER BY name",
    )
    .pluck()
    .all() as string[];
  const stale = staleMarkers(db);
  return tables.map((table) => {
    if (stale.length > 0 && table.startsWith("messages_fts")) {
      return {
        table,
        result: `skipped: the file marks its search index for a rebuild (${stale.join(", ")})`,
      };
    }
    try {
      db.prepare(`INSERT INTO ${quote(table)}(${quote(table)}) VALUES ('integrity-check')`).run();
      return { table, result: "ok" };
    } catch (error) {
      const message = (error as Error).message;
      // A tokenizer this process does not have (the agent's optional CJK one): not checkable here.
      if (/no such tokenizer|no such function|no such module/i.test(message)) {
        return { table, result: `skipped: ${message}` };
      }
      return { table, result: message };
    }
  });
}

/**
 * Checks a snapshot file of our own (never the agent's: the FTS check runs as an INSERT
 * command): `integrity_check`, each FTS5 table's `integrity-check` where the file's own state
 * allows it, and the row count of every ordinary table.
 */
export function checkSnapshot(path: string): SnapshotCheck {
  const db = new Database(path, { fileMustExist: true });
  try {
    const integrity = (db.pragma("integrity_check") as Array<{ integrity_check: string }>).map(
      (r) => r.integrity_check,
    );
    const virtual = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'")
      .pluck()
      .all() as string[];
    const shadow = new Set(virtual.flatMap((v) => SHADOW_SUFFIXES.map((s) => `${v}_${s}`)));
    const tables = (
      db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .pluck()
        .all() as string[]
    ).filter((t) => !shadow.has(t));
    const counts: Record<string, number> = {};
    for (const t of tables)
      counts[t] = db
        .prepare(`SELECT count(*) FROM ${quote(t)}`)
        .pluck()
        .get() as number;
    const has = (t: string) => tables.includes(t);
    const schemaVersion = has("schema_version")
      ? ((db.prepare("SELECT max(version) FROM schema_version").pluck().get() as number | null) ?? null)
      : null;
    let generation: string | null = null;
    if (has("state_meta")) {
      generation =
        (db.prepare("SELECT value FROM state_meta WHERE key = 'db_file_generation'").pluck().get() as
          | string
          | undefined) ?? null;
    }
    return {
      integrity,
      fts: integrity[0] === "ok" ? ftsChecks(db) : [],
      counts,
      schemaVersion,
      applicationId: db.pragma("application_id", { simple: true }) as number,
      generation,
      journalMode: db.pragma("journal_mode", { simple: true }) === "wal" ? "wal" : "delete",
      pageSize: db.pragma("page_size", { simple: true }) as number,
    };
  } finally {
    db.close();
  }
}
