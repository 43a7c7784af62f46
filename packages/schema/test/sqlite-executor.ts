import type { SqlExecutor, TransactionRunner } from "@hermes/schema";
import type Database from "better-sqlite3";

/** A better-sqlite3 connection adapted to the `SqlExecutor` slice (tests only). */
export function executor(db: Database.Database): SqlExecutor {
  return {
    exec: (sql) => void db.exec(sql),
    all: <T>(sql: string, params: readonly unknown[] = []) => db.prepare(sql).all(...params) as T[],
    get: <T>(sql: string, params: readonly unknown[] = []) => db.prepare(sql).get(...params) as T | undefined,
    run: (sql, params = []) => ({ changes: db.prepare(sql).run(...params).changes }),
  };
}

/** `BEGIN IMMEDIATE … COMMIT` around `fn`, rolled back if it throws; counts its calls. */
export function transactionRunner(db: Database.Database): TransactionRunner & { calls: string[] } {
  const calls: string[] = [];
  const run = async <T>(label: string, fn: () => T): Promise<T> => {
    calls.push(label);
    db.exec("BEGIN IMMEDIATE");
    try {
      const result = fn();
      db.exec("COMMIT");
      return result;
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw error;
    }
  };
  return Object.assign(run, { calls });
}

/** `PRAGMA table_info` of one table. */
export interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}

export function tableInfo(db: Database.Database, table: string): ColumnInfo[] {
  return db
    .prepare('SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)')
    .all(table) as ColumnInfo[];
}
