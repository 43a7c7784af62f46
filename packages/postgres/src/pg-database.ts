import type { MessagesTable, SchemaVersionTable, SessionsTable, StateMetaTable } from "@hermes/schema";
import { HermesStoreError, InvalidArgumentError, SessionNotFoundError, StoreBusyError } from "@hermes/store";
import {
  Kysely,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type RawBuilder,
  sql,
} from "kysely";
import pg from "pg";

/**
 * `messages` on PostgreSQL: the columns of `state.db` plus the search columns the store writes
 * (the `tsvector` goes in as its text literal and is never read back as a value).
 */
export interface PgMessagesTable extends MessagesTable {
  search_vector: string | null;
  /** Words of the message (FTS5's document size in bm25). */
  search_tokens: number | null;
  /** Trigrams of the message (the trigram ranking's document size). */
  search_trigrams: number | null;
}

/** The Kysely database interface of the PostgreSQL schema (see `PG_MIGRATIONS`). */
export interface PgDatabase {
  sessions: SessionsTable;
  messages: PgMessagesTable;
  state_meta: StateMetaTable;
  schema_version: SchemaVersionTable;
}

/** A Kysely instance or transaction on the store's schema. */
export type PgDb = Kysely<PgDatabase>;

// bigint (COUNT, SUM of integers, ids) and numeric come back as JavaScript numbers, as the
// SQLite store returns INTEGER and REAL columns.
const INT8 = 20;
const NUMERIC = 1700;
const TYPES = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as "text");
  },
} as unknown as pg.CustomTypesConfig;

/**
 * The pool as Kysely's dialect sees it, with the store's type parsers on every query. Set per
 * query (not on the pool) so that a pool the caller passes in keeps its own parsers elsewhere.
 */
function typedPool(pool: pg.Pool): PostgresPool {
  // One wrapper per pg client: the dialect keys its connections by the client object.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (wrapper === undefined) {
        wrapper = {
          query: ((text: string, values: readonly unknown[]) =>
            client.query({
              text,
              values: values as unknown[],
              types: TYPES,
            })) as unknown as PostgresPoolClient["query"],
          release: (destroy?: boolean) => client.release(destroy),
        };
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    // The store ends a pool it made itself (never one passed in), and not through Kysely.
    end: async () => {},
  };
}

/** Kysely on `pool` through its PostgreSQL dialect. */
export function createPgDb(pool: pg.Pool): PgDb {
  return new Kysely<PgDatabase>({ dialect: new PostgresDialect({ pool: typedPool(pool) }) });
}

/** `= ANY($1::text[])`'s right side: one array parameter, however many values. */
export function anyText(values: readonly string[]): RawBuilder<string> {
  return sql<string>`ANY(${values}::text[])`;
}

const sqlState = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null ? ((error as { code?: unknown }).code as string) : undefined;

/** Serialization failures and deadlocks: the transaction is retried. */
export function isRetryable(error: unknown): boolean {
  const code = sqlState(error);
  return code === "40001" || code === "40P01";
}

/** A PostgreSQL error as the store's typed errors where there is an equivalent. */
export function mapPgError(error: unknown): unknown {
  if (error instanceof HermesStoreError) return error;
  const code = sqlState(error);
  if (code === "22021" || code === "22P05" || code === "54000") {
    return new InvalidArgumentError("value", `PostgreSQL refused a value: ${(error as Error).message}`);
  }
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code)) {
    return new HermesStoreError("SQLITE_ERROR", `PostgreSQL error ${code}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return error;
}

/** A foreign-key failure naming the session the caller asked for. */
export function foreignKeyToNotFound(error: unknown, sessionId: string, what: string): unknown {
  if (sqlState(error) === "23503") {
    return new SessionNotFoundError(sessionId, `${what}: session ${sessionId} does not exist`, {
      cause: error,
    });
  }
  return error;
}

/** Whether `error` is a unique violation of `constraint`. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  return sqlState(error) === "23505" && (error as { constraint?: string }).constraint === constraint;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The write path: one transaction per operation (`db.transaction()`), applied in call order (a
 * FIFO per store, as the SQLite store's queue), serialization failures and deadlocks retried
 * with jittered backoff until the deadline, then `STORE_BUSY`.
 */
export class PgWriter {
  #tail: Promise<unknown> = Promise.resolve();
  #pending = 0;
  /** Counters in the shape of the SQLite store's `WriteStats` (one write per transaction). */
  readonly stats = {
    writes: 0,
    failedWrites: 0,
    attempts: 0,
    retries: 0,
    busyErrors: 0,
    waitedMs: 0,
    busyTimeouts: 0,
  };

  constructor(
    private readonly db: PgDb,
    private readonly deadlineMs: number,
  ) {}

  /**
   * Runs `fn` in a transaction after every earlier write of this store; with
   * `transaction: false`, on one connection outside a transaction (e.g. `VACUUM`).
   */
  run<T>(fn: (db: PgDb) => Promise<T>, o: { transaction?: boolean } = {}): Promise<T> {
    this.#pending++;
    const result = this.#tail.then(() => this.#attempt(fn, o.transaction !== false));
    this.#tail = result.then(
      () => this.#pending--,
      () => this.#pending--,
    );
    return result;
  }

  /** Resolves when no write is queued or running. */
  async whenIdle(): Promise<void> {
    while (this.#pending > 0) await this.#tail;
  }

  async #attempt<T>(fn: (db: PgDb) => Promise<T>, transaction: boolean): Promise<T> {
    const started = performance.now();
    for (let attempt = 1, backoff = 2; ; attempt++, backoff = Math.min(backoff * 2, 100)) {
      try {
        this.stats.attempts++;
        // Kysely rolls back when `fn` throws (and discards a connection whose rollback fails).
        const result = transaction
          ? await this.db.transaction().execute(fn)
          : await this.db.connection().execute(fn);
        this.stats.writes++;
        return result;
      } catch (error) {
        const waited = performance.now() - started;
        if (isRetryable(error)) {
          this.stats.busyErrors++;
          if (waited >= this.deadlineMs) {
            this.stats.busyTimeouts++;
            this.stats.failedWrites++;
            throw new StoreBusyError(attempt, waited, { cause: error });
          }
          this.stats.retries++;
          const pause = backoff / 2 + Math.random() * (backoff / 2);
          this.stats.waitedMs += pause;
          await sleep(pause);
          continue;
        }
        this.stats.failedWrites++;
        throw mapPgError(error);
      }
    }
  }
}
