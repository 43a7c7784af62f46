import type { DatabaseConnection } from "./database-connection.js";
import type { WriteQueue } from "./write/write-queue.js";

/** What every operation module receives from the store. */
export interface StoreContext {
  readonly conn: DatabaseConnection;
  readonly writes: WriteQueue;
  readonly path: string;
  /** The clock, in Unix epoch seconds (float); replaceable in tests. */
  now(): number;
}
