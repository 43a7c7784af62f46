import type { PgDb } from "./pg-database.js";
import type { CorpusCache } from "./search/search-query.js";

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
  /** A long-lived iterable whose failure after `close()` becomes `STORE_CLOSED`. */
  guard<T>(source: AsyncIterable<T>): AsyncIterable<T>;
  /** The store's bm25 corpus sizes, kept between searches. */
  readonly corpus: CorpusCache;
}
