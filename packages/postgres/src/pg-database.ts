import { HermesStoreError, InvalidArgumentError, SessionNotFoundError, StoreBusyError } from "@hermes/store";
import pg from "pg";

/** A pg query function: rows of one statement. */
export type Query = <R = Record<string, unknown>>(sql: string, params?: readonly unknown[]) => Promise<R[]>;

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

/** Runs one statement on a client or pool with the store's type parsers. */
export function queryOn(target: pg.Pool | pg.PoolClient): Query {
  return async <R>(text: string, values: readonly unknown[] = []) =>
    (await target.query({ text, values: values as unknown[], types: TYPES })).rows as R[];
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
 * The write path: one transaction per operation, applied in call order (a FIFO per store, as
 * the SQLite store's queue), serialization failures and deadlocks retried with jittered backoff
 * until the deadline, then `STORE_BUSY`.
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
    private readonly pool: pg.Pool,
    private readonly deadlineMs: number,
  ) {}

  /** Runs `fn` in a transaction after every earlier write of this store. */
  run<T>(fn: (q: Query, client: pg.PoolClient) => Promise<T>, o: { transaction?: boolean } = {}): Promise<T> {
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

  async #attempt<T>(fn: (q: Query, client: pg.PoolClient) => Promise<T>, transaction: boolean): Promise<T> {
    const started = performance.now();
    for (let attempt = 1, backoff = 2; ; attempt++, backoff = Math.min(backoff * 2, 100)) {
      const client = await this.pool.connect();
      let broken = false;
      let released = false;
      try {
        this.stats.attempts++;
        if (transaction) await client.query("BEGIN");
        const result = await fn(queryOn(client), client);
        if (transaction) await client.query("COMMIT");
        this.stats.writes++;
        return result;
      } catch (error) {
        if (transaction) await client.query("ROLLBACK").catch(() => (broken = true));
        const waited = performance.now() - started;
        if (isRetryable(error)) {
          this.stats.busyErrors++;
          if (waited >= this.deadlineMs) {
            this.stats.busyTimeouts++;
            this.stats.failedWrites++;
            throw new StoreBusyError(attempt, waited, { cause: error });
          }
          this.stats.retries++;
          client.release(broken);
          released = true;
          const pause = backoff / 2 + Math.random() * (backoff / 2);
          this.stats.waitedMs += pause;
          await sleep(pause);
          continue;
        }
        this.stats.failedWrites++;
        throw mapPgError(error);
      } finally {
        if (!released) client.release(broken);
      }
    }
  }
}
