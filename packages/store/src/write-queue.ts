import type { DatabaseConnection } from "./database-connection.js";
import { StoreBusyError } from "./errors.js";
import { isBusyError, mapSqliteError } from "./sqlite-errors.js";

/** How a write waits for the lock held by another connection. */
export interface WritePolicy {
  /** Total patience of one write, in ms; past it the write fails with `STORE_BUSY`. */
  readonly deadlineMs: number;
  /** First backoff between attempts, in ms (jittered). */
  readonly backoffMinMs: number;
  /** Largest backoff between attempts, in ms. */
  readonly backoffMaxMs: number;
  /** PASSIVE checkpoint after this many successful writes (the reference uses 50). */
  readonly checkpointEvery: number;
}

export const DEFAULT_WRITE_POLICY: WritePolicy = {
  deadlineMs: 30_000,
  backoffMinMs: 1,
  backoffMaxMs: 50,
  checkpointEvery: 50,
};

/** Counters of the write path, readable through `store.stats()`. */
export interface WriteStats {
  /** Committed write transactions. */
  writes: number;
  /** `BEGIN IMMEDIATE` attempts, successful or not. */
  attempts: number;
  /** Attempts repeated after a busy/locked error. */
  retries: number;
  /** Busy/locked errors met. */
  busyErrors: number;
  /** Total time spent waiting between attempts, in ms. */
  waitedMs: number;
  /** Writes that gave up with `STORE_BUSY`. */
  busyTimeouts: number;
  /** Checkpoints run. */
  checkpoints: number;
}

interface Job {
  readonly label: string;
  readonly fn: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The one way this process writes: a FIFO of write units, each run as one synchronous
 * `BEGIN IMMEDIATE … COMMIT` on the writer connection.
 *
 * - No `await` inside a transaction (better-sqlite3 transactions are synchronous), so writers
 *   of this process never interleave, and calls apply in call order.
 * - A busy/locked error rolls back and the whole unit is retried later, after a jittered,
 *   growing backoff on a timer (the event loop keeps running), until the deadline; then
 *   `STORE_BUSY`. Any other error rolls back and rejects at once.
 */
export class WriteQueue {
  readonly stats: WriteStats = {
    writes: 0,
    attempts: 0,
    retries: 0,
    busyErrors: 0,
    waitedMs: 0,
    busyTimeouts: 0,
    checkpoints: 0,
  };
  readonly #conn: DatabaseConnection;
  readonly #policy: WritePolicy;
  readonly #jobs: Job[] = [];
  #draining = false;
  #idle: Promise<void> = Promise.resolve();
  #markIdle: () => void = () => {};

  constructor(conn: DatabaseConnection, policy: WritePolicy) {
    this.#conn = conn;
    this.#policy = policy;
  }

  /** Queues `fn` to run inside its own write transaction; resolves after COMMIT. */
  run<T>(label: string, fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#jobs.push({ label, fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.#draining) void this.#drain();
    });
  }

  /** Resolves when every queued write has settled. */
  whenIdle(): Promise<void> {
    return this.#idle;
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    this.#idle = new Promise((r) => {
      this.#markIdle = r;
    });
    try {
      for (let job = this.#jobs.shift(); job !== undefined; job = this.#jobs.shift()) {
        try {
          job.resolve(await this.#execute(job));
        } catch (error) {
          job.reject(error);
        }
      }
    } finally {
      this.#draining = false;
      this.#markIdle();
    }
  }

  async #execute(job: Job): Promise<unknown> {
    const started = performance.now();
    let attempts = 0;
    let backoff = this.#policy.backoffMinMs;
    for (;;) {
      attempts++;
      this.stats.attempts++;
      try {
        const result = this.#attempt(job.fn);
        this.stats.writes++;
        if (this.#policy.checkpointEvery > 0 && this.stats.writes % this.#policy.checkpointEvery === 0) {
          this.checkpoint("PASSIVE");
        }
        return result;
      } catch (error) {
        if (!isBusyError(error)) throw mapSqliteError(error, this.#conn.path);
        this.stats.busyErrors++;
        const waited = performance.now() - started;
        const remaining = this.#policy.deadlineMs - waited;
        if (remaining <= 0) {
          this.stats.busyTimeouts++;
          throw new StoreBusyError(attempts, waited, { cause: error });
        }
        // Full jitter: spread competing processes so they do not wake in lockstep.
        const delay = Math.min(remaining, backoff / 2 + Math.random() * (backoff / 2));
        backoff = Math.min(backoff * 2, this.#policy.backoffMaxMs);
        this.stats.retries++;
        const before = performance.now();
        await sleep(delay);
        this.stats.waitedMs += performance.now() - before;
      }
    }
  }

  #attempt(fn: () => unknown): unknown {
    const conn = this.#conn;
    conn.exec("BEGIN IMMEDIATE");
    try {
      const result = fn();
      conn.exec("COMMIT");
      return result;
    } catch (error) {
      if (conn.inTransaction) {
        try {
          conn.exec("ROLLBACK");
        } catch {
          // The transaction is already gone (SQLite rolls back on some errors itself).
        }
      }
      throw error;
    }
  }

  /** Runs `PRAGMA wal_checkpoint(mode)`; never throws (a busy checkpoint is not an error). */
  checkpoint(mode: "PASSIVE" | "FULL" | "RESTART" | "TRUNCATE"): boolean {
    try {
      this.#conn.db.pragma(`wal_checkpoint(${mode})`);
      this.stats.checkpoints++;
      return true;
    } catch {
      return false;
    }
  }
}
