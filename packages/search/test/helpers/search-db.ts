import type { SqlExecutor } from "@hermes/schema";
import { CORE_INDEXES, CORE_TABLES } from "@hermes/schema";
import {
  CJK_STATE_TABLE,
  cjkIndexNeedsUpgrade,
  cjkIndexPresence,
  FTS_TABLE,
  ftsTableScript,
  TRIGRAM_TABLE,
} from "@hermes/search";
import Database from "better-sqlite3";
import { backfillCjkChunk, createCjkIndex, drainCjkQueue } from "../../dist/cjk-index/cjk-index.js";
import { fillTimestampBlocksChunk } from "../../dist/cjk-index/timestamp-blocks.js";

/** One message of a test corpus. */
export interface CorpusMessage {
  content: string | null;
  tool_calls?: string | null;
  tool_name?: string | null;
  role?: string;
  source?: string;
}

/**
 * An in-memory database with the exact v11 tables, the reference's FTS tables and triggers,
 * and `corpus` inserted with the reference's INSERT (one session per source).
 */
export function searchDb(corpus: readonly CorpusMessage[]): Database.Database {
  const db = new Database(":memory:");
  for (const sql of Object.values(CORE_TABLES)) db.exec(sql);
  for (const sql of Object.values(CORE_INDEXES)) db.exec(sql);
  for (const sql of [...ftsTableScript(FTS_TABLE), ...ftsTableScript(TRIGRAM_TABLE)]) db.exec(sql);
  const sessions = new Set<string>();
  const addSession = db.prepare("INSERT INTO sessions (id, source, model, started_at) VALUES (?, ?, ?, ?)");
  const add = db.prepare(
    "INSERT INTO messages (session_id, role, content, tool_calls, tool_name, timestamp) VALUES (?, ?, ?, ?, ?, ?)",
  );
  let t = 1_767_225_600;
  for (const m of corpus) {
    const source = m.source ?? "cli";
    if (!sessions.has(source)) {
      addSession.run(`s-${source}`, source, "m", t);
      sessions.add(source);
    }
    add.run(`s-${source}`, m.role ?? "user", m.content, m.tool_calls ?? null, m.tool_name ?? null, ++t);
  }
  return db;
}

/** better-sqlite3 as a `SqlExecutor`, remembering every error it raised (then rethrowing it). */
export function recordingExecutor(db: Database.Database): SqlExecutor & { errors: Error[] } {
  const errors: Error[] = [];
  const cache = new Map<string, Database.Statement>();
  const stmt = (sql: string) => {
    let s = cache.get(sql);
    if (s === undefined) {
      s = db.prepare(sql);
      cache.set(sql, s);
    }
    return s;
  };
  const guard = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      errors.push(error as Error);
      throw error;
    }
  };
  return {
    errors,
    exec: (sql) => guard(() => void db.exec(sql)),
    all: <T>(sql: string, params: readonly unknown[] = []) => guard(() => stmt(sql).all(...params) as T[]),
    get: <T>(sql: string, params: readonly unknown[] = []) =>
      guard(() => stmt(sql).get(...params) as T | undefined),
    run: (sql, params = []) => guard(() => ({ changes: stmt(sql).run(...params).changes })),
  };
}

/** Runs `fn` as one transaction, as the store's write queue does. */
export function syncTransaction(db: Database.Database) {
  return async <T>(_label: string, fn: () => T): Promise<T> => db.transaction(fn).immediate();
}

/** What the store does before a short-CJK query, synchronously: create/upgrade, backfill, fill, drain. */
export function catchUp(db: Database.Database): void {
  const exec = recordingExecutor(db);
  db.transaction(() => {
    if (cjkIndexPresence(exec) !== "present" || cjkIndexNeedsUpgrade(exec)) createCjkIndex(exec);
    while (backfillCjkChunk(exec, 97).remaining > 0);
    while (fillTimestampBlocksChunk(exec, CJK_STATE_TABLE, 300).remaining > 0);
    while (drainCjkQueue(exec, 97) > 0);
  })();
}
