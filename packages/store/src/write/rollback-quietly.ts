import type { DatabaseConnection } from "../database-connection.js";

/** Rolls back the open transaction, if any; never throws. */
export function rollbackQuietly(conn: DatabaseConnection): void {
  if (!conn.inTransaction) return;
  try {
    conn.statement("ROLLBACK").run();
  } catch {
    // The transaction is already gone (SQLite rolls back on some errors itself).
  }
}
