import type { SqlExecutor } from "@hermes/schema";
import Database from "better-sqlite3";
import { bindArgs, type CompiledTemplate } from "./prepared-query.js";

type Statement = Database.Statement<unknown[], unknown>;

/** Pragmas applied to every connection at open. */
export interface ConnectionPragmas {
  /** SQLite's own busy handler, in ms. Kept short: better-sqlite3 waits synchronously. */
  readonly busyTimeoutMs: number;
  readonly synchronous: "OFF" | "NORMAL" | "FULL" | "EXTRA";
  /** Bytes the WAL is truncated to after a checkpoint resets it. */
  readonly journalSizeLimit: number;
  readonly readOnly: boolean;
  /** Open this in-memory image of the file instead of the file (a read-only snapshot). */
  readonly image?: Buffer;
}

/**
 * One better-sqlite3 connection with a prepared-statement cache keyed by SQL text.
 * Implements the `SqlExecutor` slice that migrations use.
 */
export class DatabaseConnection implements SqlExecutor {
  readonly db: Database.Database;
  readonly path: string;
  readonly #statements = new Map<string, Statement>();
  #busyTimeoutMs: number;

  constructor(path: string, pragmas: ConnectionPragmas) {
    this.path = path;
    this.#busyTimeoutMs = Math.max(0, Math.floor(pragmas.busyTimeoutMs));
    this.db = new Database(pragmas.image ?? path, {
      readonly: pragmas.readOnly,
      fileMustExist: pragmas.readOnly && pragmas.image === undefined,
      timeout: pragmas.busyTimeoutMs,
    });
    try {
      this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(pragmas.busyTimeoutMs))}`);
      this.db.pragma("foreign_keys = ON");
      this.db.pragma(`synchronous = ${pragmas.synchronous}`);
      if (!pragmas.readOnly) {
        this.db.pragma(`journal_size_limit = ${Math.floor(pragmas.journalSizeLimit)}`);
      }
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  /** The busy timeout in force, in ms (the one it was opened with, unless {@link setBusyTimeout} changed it). */
  get busyTimeoutMs(): number {
    return this.#busyTimeoutMs;
  }

  /**
   * Sets SQLite's busy timeout, in ms: `0` while this connection must never sleep in the busy
   * handler (on the caller's thread, while the store's own builder takes the lock in turns).
   */
  setBusyTimeout(ms: number): void {
    const next = Math.max(0, Math.floor(ms));
    if (next === this.#busyTimeoutMs || !this.db.open) return;
    this.statement(`PRAGMA busy_timeout = ${next}`).get();
    this.#busyTimeoutMs = next;
  }

  /**
   * Runs `fn` with SQLite's busy handler off: a statement that meets a lock fails at once
   * instead of sleeping (blocking the event loop) for up to the busy timeout.
   */
  withoutBusyWait<T>(fn: () => T): T {
    const ms = this.#busyTimeoutMs;
    if (ms === 0) return fn();
    this.statement("PRAGMA busy_timeout = 0").get();
    try {
      return fn();
    } finally {
      this.statement(`PRAGMA busy_timeout = ${ms}`).get();
    }
  }

  /** A cached prepared statement for `sql`. */
  statement(sql: string): Statement {
    let stmt = this.#statements.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql);
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }

  /** Runs a compiled template and returns all rows. */
  allOf<R, A>(template: CompiledTemplate<A>, args: A): R[] {
    return this.statement(template.sql).all(...bindArgs(template, args)) as R[];
  }

  /** Runs a compiled template and returns the first row, or `undefined`. */
  getOf<R, A>(template: CompiledTemplate<A>, args: A): R | undefined {
    return this.statement(template.sql).get(...bindArgs(template, args)) as R | undefined;
  }

  /** Runs a compiled template that returns no rows. */
  runOf<A>(template: CompiledTemplate<A>, args: A): Database.RunResult {
    return this.statement(template.sql).run(...bindArgs(template, args));
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  all<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): T[] {
    return this.statement(sql).all(...params) as T[];
  }

  get<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): T | undefined {
    return this.statement(sql).get(...params) as T | undefined;
  }

  run(sql: string, params: readonly unknown[] = []): { changes: number } {
    const r = this.statement(sql).run(...params);
    return { changes: r.changes };
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  close(): void {
    this.#statements.clear();
    if (this.db.open) this.db.close();
  }
}
