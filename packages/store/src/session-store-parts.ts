import type { MigrationReport } from "@hermes/schema";
import type { DatabaseConnection } from "./database-connection.js";
import type { ReadOnlyStoreState } from "./open-read-only-store.js";
import type { ReadPool } from "./read-pool/read-pool.js";
import type { CjkBuildSettings } from "./side-index/cjk-side-index.js";
import type { WritePath } from "./write/write-path.js";
import type { WriteQueue } from "./write/write-queue.js";
import type { WriterThread } from "./write/writer-thread.js";

/** @internal What `openSessionStore` builds a `SessionStore` from. */
export interface SessionStoreParts {
  readonly conn: DatabaseConnection;
  /** The queue of this thread's connection (a read-only store's refuses; with a writer thread it runs nothing). */
  readonly writes: WriteQueue;
  readonly migration: MigrationReport;
  readonly clock: () => number;
  readonly sqliteVersion: string;
  /** This thread's write path (a writable store without a writer thread). */
  readonly writePath?: WritePath | undefined;
  /** The writer thread, started and ready (`writer: "thread"`). */
  readonly writer?: WriterThread | undefined;
  /** `writer: "auto"`: the writer thread to start once this thread has written enough. */
  readonly spawnWriter?: (() => WriterThread) | undefined;
  readonly readOnly?: ReadOnlyStoreState | undefined;
  readonly pool?: ReadPool | undefined;
  /** The short-CJK builder's settings (a writable store whose index is built on this side). */
  readonly cjk?: CjkBuildSettings | undefined;
}
