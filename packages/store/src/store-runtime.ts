import { statSync } from "node:fs";
import type { SqliteStoreStats } from "@hermes/core";
import type { DatabaseConnection } from "./database-connection.js";
import type { ReadOnlyStoreState } from "./open-read-only-store.js";
import type { ReadPool } from "./read-pool/read-pool.js";
import type { CjkSideIndex } from "./side-index/cjk-side-index.js";
import type { WriteStats } from "./write/write-stats.js";

/** What {@link StoreRuntime} ends and reports on. */
export interface StoreRuntimeParts {
  readonly conn: DatabaseConnection;
  /** The write path (this thread's queue or the writer thread: `WriteRouter`). */
  readonly writes: { stats(): WriteStats; whenIdle(): Promise<void>; close(): Promise<void> };
  readonly pool: ReadPool | undefined;
  readonly cjkIndex: CjkSideIndex;
  readonly readOnly: ReadOnlyStoreState | undefined;
}

/**
 * The running side of a SQLite `SessionStore`: open or closed, its `stats()`, and `close()`,
 * which ends the threads and the connection in the order the file needs.
 */
export class StoreRuntime {
  readonly #parts: StoreRuntimeParts;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(parts: StoreRuntimeParts) {
    this.#parts = parts;
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Counters of the write path, the current WAL size and the side indexes' state
   * (`backend: "sqlite"`).
   */
  stats(): SqliteStoreStats {
    const { conn, readOnly, cjkIndex, writes } = this.#parts;
    const walBytes = this.#closed ? 0 : walSize(conn.path);
    try {
      if (!this.#closed) readOnly?.file.refresh();
    } catch {
      // The side index then reports what it saw last (stats() never fails).
    }
    const cjk = cjkIndex.status();
    return { backend: "sqlite", ...writes.stats(), walBytes, sideIndexes: { cjk } };
  }

  /** Waits for queued writes, checkpoints best-effort and closes the connection. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      const { conn, writes, pool, cjkIndex, readOnly } = this.#parts;
      await cjkIndex.close();
      // Workers first: their read snapshots would hold the closing checkpoint back.
      await pool?.close();
      if (readOnly !== undefined) {
        readOnly.file.close();
        return;
      }
      await writes.whenIdle();
      // The write path's threads, and its final checkpoint (closeWritePath).
      await writes.close();
      conn.close();
    })();
    return this.#closing;
  }
}

/** Size of the `-wal` file beside `path`, in bytes (0 when there is none). */
export function walSize(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}
