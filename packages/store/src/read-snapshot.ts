import type { StoreContext } from "./store-context.js";

/**
 * Runs several reads against one snapshot of the file, so that another process's commit cannot
 * land between them (an export whose session row and messages disagree, a lineage walk that
 * sees a parent its message query does not).
 *
 * A deferred transaction only takes a read lock in WAL mode: it never blocks writers, and
 * `fn` must be synchronous (no await inside), like every transaction on this connection. When a
 * transaction is already open (a read from inside a write unit), `fn` simply joins it.
 */
export function readSnapshot<T>(ctx: StoreContext, fn: () => T): T {
  const conn = ctx.conn;
  if (conn.inTransaction) return fn();
  // A read snapshot, not a write path: writes always use BEGIN IMMEDIATE through the queue.
  conn.statement("BEGIN DEFERRED").run();
  try {
    return fn();
  } finally {
    if (conn.inTransaction) conn.statement("COMMIT").run();
  }
}
