import type { QueryResultRow } from "pg";
import type { PgDb } from "./pg-database.js";
import type { GroupResult } from "./pg-writer.js";
import type { WordIndex } from "./search/word-index.js";

/**
 * What every operation module receives from `PostgresSessionStore`: the database, the clock and
 * the store's ways to read, write and stop after `close()`. Reads and writes check that the store
 * is open first (`STORE_CLOSED`), so an operation validates its arguments, then calls them.
 */
export interface PgStoreContext {
  /** Kysely on the store's pool, outside the writer (e.g. a read after a write's transaction aborted). */
  readonly db: PgDb;
  /** The clock, in Unix epoch seconds (float); replaceable in tests. */
  now(): number;
  /** Throws `STORE_CLOSED` once `close()` was called. */
  check(): void;
  /** One read on the pool, its errors mapped to the store's; `close()` waits for it. */
  read<T>(fn: (db: PgDb) => Promise<T>): Promise<T>;
  /** Several reads from one snapshot (REPEATABLE READ, read only). */
  snapshot<T>(fn: (db: PgDb) => Promise<T>): Promise<T>;
  /** One write: a transaction (or, with `transaction: false`, one connection) after every earlier write. */
  write<T>(fn: (db: PgDb) => Promise<T>, o?: { transaction?: boolean }): Promise<T>;
  /**
   * One prepared statement on the pool, outside Kysely (`poolQuery`): for the store's hottest
   * statement only. Inside a write it runs in the writer's order like any statement of it.
   */
  query<R extends QueryResultRow>(text: string, values: readonly unknown[]): Promise<R[]>;
  /** One item of a grouped write (see `PgWriter.group`): calls queued together share one statement. */
  group<I, R>(
    kind: string,
    item: I,
    fn: (db: PgDb, items: readonly I[]) => Promise<GroupResult<R>[]>,
  ): Promise<R>;
  /** A long-lived iterable whose failure after `close()` becomes `STORE_CLOSED`. */
  guard<T>(source: AsyncIterable<T>): AsyncIterable<T>;
  /**
   * The word index: which layout serves ranked search (RUM sealed ranges and a GIN open range,
   * or one GIN index), its ranges, and the seals this store runs.
   */
  readonly searchIndex: WordIndex;
}
