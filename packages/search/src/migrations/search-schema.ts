import type { EnsureStep, SchemaContribution, SqlExecutor, VersionStep } from "@hermes/schema";
import { objectExists } from "@hermes/schema";
import { FTS_TABLE, FTS_TRIGGERS, ftsTableScript, TRIGRAM_TABLE } from "../fts-ddl.js";

const BACKFILL_CHUNK = 50_000;

/**
 * Fills an FTS table from `messages` in rowid ranges so long upgrades can report progress.
 * Same rows and columns as the reference's single `INSERT … SELECT`.
 */
function backfill(
  db: SqlExecutor,
  table: string,
  columns: string,
  where: string,
  step: string,
  onProgress?: (p: { step: string; done: number; total: number }) => void,
): void {
  const bounds = db.get<{ lo: number | null; hi: number | null; n: number }>(
    `SELECT MIN(id) AS lo, MAX(id) AS hi, COUNT(*) AS n FROM messages${where ? ` WHERE ${where}` : ""}`,
  );
  const total = bounds?.n ?? 0;
  onProgress?.({ step, done: 0, total });
  if (!bounds || bounds.lo === null || bounds.hi === null) return;
  const cols = columns.split(",").map((c) => c.trim());
  const sql = `INSERT INTO ${table}(rowid, ${cols.join(", ")}) SELECT id, ${cols.join(", ")} FROM messages WHERE id >= ? AND id < ?${where ? ` AND ${where}` : ""}`;
  let done = 0;
  for (let lo = bounds.lo; lo <= bounds.hi; lo += BACKFILL_CHUNK) {
    const hi = lo + BACKFILL_CHUNK;
    done += db.run(sql, [lo, hi]).changes;
    onProgress?.({ step, done, total });
  }
}

function dropFts(db: SqlExecutor): void {
  for (const name of Object.keys(FTS_TRIGGERS)) db.exec(`DROP TRIGGER IF EXISTS ${name}`);
  db.exec(`DROP TABLE IF EXISTS ${FTS_TABLE}`);
  db.exec(`DROP TABLE IF EXISTS ${TRIGRAM_TABLE}`);
}

/**
 * v10: the trigram table for CJK and substring search. Created when missing and filled from
 * `content` only, as the reference's v10 step does (the v11 step that always follows rebuilds
 * it with all three columns).
 */
export const v10TrigramStep: VersionStep = {
  version: 10,
  name: "v10-trigram",
  up({ db, onProgress }) {
    if (objectExists(db, "table", TRIGRAM_TABLE)) return;
    for (const sql of ftsTableScript(TRIGRAM_TABLE)) db.exec(sql);
    backfill(db, TRIGRAM_TABLE, "content", "content IS NOT NULL", "v10-trigram", onProgress);
  },
};

/**
 * v11: both FTS tables rebuilt with three columns (`content`, `tool_calls`, `tool_name`) and
 * backfilled from every message, so tokens found only in tool-call JSON or tool names become
 * searchable (hermes-agent issue #16751).
 */
export const v11FtsReindexStep: VersionStep = {
  version: 11,
  name: "v11-fts-reindex",
  up({ db, onProgress }) {
    dropFts(db);
    for (const sql of ftsTableScript(FTS_TABLE)) db.exec(sql);
    for (const sql of ftsTableScript(TRIGRAM_TABLE)) db.exec(sql);
    const cols = "content, tool_calls, tool_name";
    backfill(db, FTS_TABLE, cols, "", "v11-fts-reindex", onProgress);
    backfill(db, TRIGRAM_TABLE, cols, "", "v11-fts-reindex-trigram", onProgress);
  },
};

function queryable(db: SqlExecutor, table: string): boolean {
  try {
    db.all(`SELECT * FROM ${table} LIMIT 0`);
    return true;
  } catch {
    return false;
  }
}

/**
 * Both FTS tables and their triggers exist. As in the reference, tables created here are not
 * backfilled (a fresh file has no messages to index).
 */
export const ensureFtsStep: EnsureStep = {
  name: "fts-tables",
  isSatisfied(db) {
    return (
      objectExists(db, "table", FTS_TABLE) &&
      objectExists(db, "table", TRIGRAM_TABLE) &&
      Object.keys(FTS_TRIGGERS).every((t) => objectExists(db, "trigger", t))
    );
  },
  up({ db }) {
    for (const table of [FTS_TABLE, TRIGRAM_TABLE] as const) {
      const script = ftsTableScript(table);
      // A table that exists but cannot be read (e.g. missing tokenizer) is left alone, as in
      // the reference; only what is missing is created.
      const [createTable, ...triggers] = script;
      if (!queryable(db, table) && createTable) db.exec(createTable);
      for (const sql of triggers) db.exec(sql);
    }
  },
};

/** What `@hermes/search` contributes to the migration chain. */
export const searchSchema: SchemaContribution = {
  versions: [v10TrigramStep, v11FtsReindexStep],
  finalize: [ensureFtsStep],
};
