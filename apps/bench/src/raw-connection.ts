import Database from "better-sqlite3";

/**
 * A hand-written better-sqlite3 connection for baselines, with the store's pragmas: WAL,
 * `synchronous = FULL`, `foreign_keys = ON`. Baseline writes use `BEGIN IMMEDIATE`
 * (`db.transaction(fn).immediate()`), the store's transaction mode.
 */
export function openRawConnection(path: string, options: { busyTimeoutMs?: number } = {}): Database.Database {
  const db = new Database(path, { timeout: options.busyTimeoutMs ?? 5000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  return db;
}

/** The SQLite version the driver was built with. */
export function sqliteVersion(): string {
  const db = new Database(":memory:");
  try {
    return String(db.prepare("SELECT sqlite_version()").pluck().get());
  } finally {
    db.close();
  }
}
