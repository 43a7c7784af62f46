/**
 * The slice of a synchronous SQLite driver that migrations need. `@hermes/store` adapts
 * better-sqlite3 to it; this package never imports a driver.
 */
export interface SqlExecutor {
  /** Runs one or more statements without parameters or results. */
  exec(sql: string): void;
  /** Runs one statement and returns every row. */
  all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): T[];
  /** Runs one statement and returns the first row, or `undefined`. */
  get<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): T | undefined;
  /** Runs one statement and returns how many rows it changed. */
  run(sql: string, params?: readonly unknown[]): { changes: number };
}
