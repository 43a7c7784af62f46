import type { DatabaseConnection } from "./database-connection.js";
import type { ProfileReads } from "./file-views.js";
import type { CjkSideIndex } from "./side-index/cjk-side-index.js";
import type { WriteQueue } from "./write/write-queue.js";

/** What every operation module receives from the store. */
export interface StoreContext {
  readonly conn: DatabaseConnection;
  readonly writes: WriteQueue;
  readonly path: string;
  /** The short-CJK side index of a writable store (its build runs on a worker thread). */
  readonly cjkIndex?: CjkSideIndex;
  /** The clock, in Unix epoch seconds (float); replaceable in tests. */
  now(): number;
  /**
   * SQL of the reads that differ for a file laid out otherwise than the reference's v11 (a
   * newer agent's, see `file-views.ts`); absent or `null` for a v11 file.
   */
  readonly reads?: ProfileReads | null;
  /**
   * Set when the store writes nothing (see `read-only-file.ts`): a connection on the same view
   * of the file for a read that spans awaits, and `refresh`, which brings a snapshot up to date
   * (for a long-lived read such as the change feed; errors mapped like the store's).
   */
  readonly readOnly?: {
    reader(): { conn: DatabaseConnection; own: boolean; release(): void };
    refresh(): void;
    /** How many times `refresh` read the file again (each time on a new connection). */
    readonly generation: number;
  };
}
