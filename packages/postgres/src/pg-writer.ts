import { StoreBusyError } from "@hermes/core";
import type { PgDb } from "./pg-database.js";
import { isRetryable, mapPgError } from "./pg-errors.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One caller's part of a grouped write: its item and how to answer it. */
interface GroupEntry<I, R> {
  readonly item: I;
  resolve(value: R): void;
  reject(error: unknown): void;
}

/** A grouped write still waiting in the FIFO: later calls of the same kind join it. */
interface OpenGroup {
  readonly kind: string;
  readonly entries: GroupEntry<unknown, unknown>[];
}

/** Where a write runs: in a transaction, on one connection, or as one statement on the pool. */
type WriteMode = "transaction" | "connection" | "statement";

/** A grouped write's answer for one item: its result, or the error for that caller alone. */
export type GroupResult<R> = { ok: R } | { error: unknown };

/**
 * The write path: one transaction per operation (`db.transaction()`), applied in call order (a
 * FIFO per store, as the SQLite store's queue), serialization failures and deadlocks retried
 * with jittered backoff until the deadline, then `STORE_BUSY`. Calls of one kind that queue
 * behind the running write (concurrent appends) are grouped into one write (group commit).
 */
export class PgWriter {
  #tail: Promise<unknown> = Promise.resolve();
  #pending = 0;
  /** The last queued write when it is a group that has not started: the next call may join it. */
  #open: OpenGroup | null = null;
  /** Counters in the shape of the SQLite store's `WriteStats` (a group counts its calls as writes). */
  readonly stats = {
    writes: 0,
    /** Transactions (or single statements) committed; a group is one. */
    groups: 0,
    /** Most calls one group carried. */
    groupMax: 0,
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
    this.#open = null;
    return this.#enqueue(fn, o.transaction === false ? "connection" : "transaction");
  }

  /**
   * Queues `item` for a grouped write of `kind`: it joins the last queued write when that is a
   * group of the same kind not yet started (nothing else was queued after it, so call order
   * holds), else starts a group. `fn` writes every item of the group in one statement (no
   * transaction around it, and no connection held for it: `db` is the store's, on its pool) and
   * answers each; a group that fails as a whole (not a retryable conflict) is written again one
   * item at a time, so one caller's bad item fails only its call.
   */
  group<I, R>(
    kind: string,
    item: I,
    fn: (db: PgDb, items: readonly I[]) => Promise<GroupResult<R>[]>,
  ): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const entry = { item, resolve, reject } as GroupEntry<unknown, unknown>;
      if (this.#open !== null && this.#open.kind === kind) {
        this.#open.entries.push(entry);
        return;
      }
      const group: OpenGroup = { kind, entries: [entry] };
      this.#open = group;
      const answer = (entries: readonly GroupEntry<unknown, unknown>[], results: GroupResult<R>[]) =>
        entries.forEach((e, i) => {
          const r = results[i]!;
          if ("ok" in r) e.resolve(r.ok);
          else e.reject(r.error);
        });
      const items = () => group.entries.map((e) => e.item as I);
      this.#enqueue(async (db) => {
        if (this.#open === group) this.#open = null;
        return fn(db, items());
      }, "statement").then(
        (results) => {
          // #attempt counted one write for the statement: the group's other calls on top.
          this.stats.writes += group.entries.length - 1;
          this.stats.groupMax = Math.max(this.stats.groupMax, group.entries.length);
          answer(group.entries, results);
        },
        async (error) => {
          if (group.entries.length === 1 || error instanceof StoreBusyError) {
            for (const e of group.entries) e.reject(error);
            return;
          }
          for (const e of group.entries) {
            await this.#enqueue(async (db) => answer([e], await fn(db, [e.item as I])), "statement").catch(
              (alone) => e.reject(alone),
            );
          }
        },
      );
    });
  }

  /**
   * Queues `fn` after every earlier write, run in a transaction, on one connection, or (a single
   * statement) on the store's pool as it is.
   */
  #enqueue<T>(fn: (db: PgDb) => Promise<T>, mode: WriteMode): Promise<T> {
    this.#pending++;
    const result = this.#tail.then(() => this.#attempt(fn, mode));
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

  async #attempt<T>(fn: (db: PgDb) => Promise<T>, mode: WriteMode): Promise<T> {
    const started = performance.now();
    for (let attempt = 1, backoff = 2; ; attempt++, backoff = Math.min(backoff * 2, 100)) {
      try {
        this.stats.attempts++;
        // Kysely rolls back when `fn` throws (and discards a connection whose rollback fails).
        const result =
          mode === "transaction"
            ? await this.db.transaction().execute(fn)
            : mode === "connection"
              ? await this.db.connection().execute(fn)
              : await fn(this.db);
        this.stats.writes++;
        this.stats.groups++;
        this.stats.groupMax = Math.max(this.stats.groupMax, 1);
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
