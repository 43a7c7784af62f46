import { StoreBusyError } from "@hermes/core";
import type { PgDb } from "./pg-database.js";
import { isRetryable, mapPgError } from "./pg-errors.js";

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
