import { type PostgresStoreStats, StoreClosedError, StoreReadOnlyError } from "@hermes/core";
import type pg from "pg";
import { type PgDb, poolQuery } from "./pg-database.js";
import { mapPgError } from "./pg-errors.js";
import type { PgStoreContext } from "./pg-store-context.js";
import { PgWriter } from "./pg-writer.js";
import { WordIndex, type WordIndexOptions } from "./search/word-index.js";
import type { WordRange } from "./search/word-ranges.js";

/** What {@link PgStoreRuntime} is made of (given by `openPostgresSessionStore`). */
export interface PgStoreRuntimeParts {
  readonly pool: pg.Pool;
  /** Whether the store made the pool (then `close()` ends it). */
  readonly ownsPool: boolean;
  readonly db: PgDb;
  /** How long a write may wait for the server's locks, in ms. */
  readonly deadlineMs: number;
  /** The schema that holds the tables (named in the read-only refusal). */
  readonly schema: string;
  readonly clock: () => number;
  /** The word index's ranges as the store found them at open (empty on the GIN layout). */
  readonly ranges: readonly WordRange[];
  readonly readOnly: boolean;
  /** Seal and refresh settings of the split word index. */
  readonly wordIndex?: WordIndexOptions;
}

/**
 * The running side of a `PostgresSessionStore`: open or closed, the reads in flight, the FIFO
 * writer and the read-only refusal. It builds the {@link PgStoreContext} every operation runs
 * on, and `close()` waits for what is running before ending the pool.
 */
export class PgStoreRuntime {
  readonly #parts: PgStoreRuntimeParts;
  readonly #writer: PgWriter;
  readonly #reads = new Set<Promise<unknown>>();
  #closed = false;
  #closing: Promise<void> | undefined;
  /** The context of the operations (`operations/`, `portable/`). */
  readonly ctx: PgStoreContext;

  constructor(parts: PgStoreRuntimeParts) {
    this.#parts = parts;
    this.#writer = new PgWriter(parts.db, parts.deadlineMs);
    this.ctx = {
      db: parts.db,
      now: parts.clock,
      check: () => this.check(),
      read: (fn) => this.#read(fn),
      snapshot: (fn) => this.#snapshot(fn),
      write: (fn, o) => this.#write(fn, o),
      query: (text, values) => poolQuery(parts.pool, text, values),
      group: (kind, item, fn) => {
        this.check();
        return this.#writer.group(kind, item, fn);
      },
      guard: (source) => this.#guard(source),
      searchIndex: new WordIndex(parts.db, parts.ranges, parts.wordIndex),
    };
  }

  get readOnly(): boolean {
    return this.#parts.readOnly;
  }

  /** Throws `STORE_CLOSED` once `close()` was called. */
  check(): void {
    if (this.#closed) throw new StoreClosedError();
  }

  /** The error every write of a read-only store rejects with. */
  refusal(): StoreReadOnlyError {
    return new StoreReadOnlyError(
      `postgresql schema ${this.#parts.schema}`,
      "it was opened with readOnly: true",
    );
  }

  async #read<T>(fn: (db: PgDb) => Promise<T>): Promise<T> {
    this.check();
    const p = fn(this.#parts.db).catch((error: unknown) => {
      throw mapPgError(error);
    });
    this.#reads.add(p);
    try {
      return await p;
    } finally {
      this.#reads.delete(p);
    }
  }

  /** Several reads from one snapshot (REPEATABLE READ, read only). */
  async #snapshot<T>(fn: (db: PgDb) => Promise<T>): Promise<T> {
    return this.#read((db) =>
      db.transaction().setIsolationLevel("repeatable read").setAccessMode("read only").execute(fn),
    );
  }

  #write<T>(fn: (db: PgDb) => Promise<T>, o?: { transaction?: boolean }): Promise<T> {
    this.check();
    // Every write goes through here: a read-only store refuses before anything reaches the server.
    if (this.#parts.readOnly) return Promise.reject(this.refusal());
    return this.#writer.run(fn, o);
  }

  /** Turns a failure after `close()` into `STORE_CLOSED` for long-lived iterables. */
  async *#guard<T>(source: AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
    try {
      for await (const item of source) {
        yield item;
        if (this.#closed) throw new StoreClosedError();
      }
    } catch (error) {
      if (this.#closed) throw error instanceof StoreClosedError ? error : new StoreClosedError();
      throw error;
    }
  }

  /**
   * Counters of the write path (`backend: "postgres"`, the write counters of `@hermes/core`):
   * `writes` counts calls, `groupsCommitted` the statements or transactions that carried them
   * (concurrent appends are grouped into one statement).
   */
  stats(): PostgresStoreStats {
    const { groups, groupMax, ...w } = this.#writer.stats;
    return {
      backend: "postgres",
      ...w,
      groupsCommitted: groups,
      writesPerGroupMean: groups > 0 ? w.writes / groups : 0,
      writesPerGroupMax: groupMax,
    };
  }

  /** Waits for queued writes and running reads, then closes the pool (when the store made it). */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      await this.#writer.whenIdle();
      // A seal under way is cancelled (what it built is dropped by the next one).
      await this.ctx.searchIndex.close();
      await Promise.allSettled([...this.#reads]);
      if (this.#parts.ownsPool) await this.#parts.pool.end();
    })();
    return this.#closing;
  }
}
