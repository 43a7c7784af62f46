import { setImmediate as nextTurn } from "node:timers/promises";
import type { DatabaseConnection } from "../database-connection.js";
import { mapSqliteError } from "../sqlite-errors.js";
import { CorruptionGuard } from "./corruption-guard.js";
import { GroupTransaction } from "./group-transaction.js";
import type { HandoffQueue } from "./handoff-queue.js";
import { type IndexRepair, runIndexRepair } from "./index-repair.js";
import { LockWait } from "./lock-wait.js";
import type { MergePacing } from "./merge-pacing.js";
import type { MergeableWrite } from "./mergeable-write.js";
import { PostedWrites } from "./posted-writes.js";
import type { SharedCommits } from "./shared-commits.js";
import { WalCheckpoints } from "./wal-checkpoints.js";
import type { JobOutcome, WriteJob } from "./write-job.js";
import type { WritePolicy } from "./write-policy.js";
import { createWriteStats, type WriteStats, writeStatsSnapshot } from "./write-stats.js";

/**
 * Longest stretch, in ms, of writes settled without the event loop getting a turn (a caller
 * awaiting one write after another); then promises settle after a `setImmediate`.
 */
const YIELD_AFTER_MS = 5;

/**
 * The one way this process writes: a FIFO of write units applied in `BEGIN IMMEDIATE … COMMIT`
 * transactions on the single writer connection.
 *
 * - **Order.** Units apply in call order; no `await` inside a transaction (better-sqlite3
 *   transactions are synchronous), so writers of this process never interleave.
 * - **Group commit.** A lone write commits at once, inside the call. Writes that arrive while a
 *   transaction is committing (or waiting for the lock) form the next group: one transaction
 *   ({@link GroupTransaction}), each write in its own `SAVEPOINT`, so a write that fails rolls
 *   back alone and rejects only its own promise. Promises settle only after `COMMIT`, so a
 *   resolved write is as durable as a lone one. Consecutive writes that declare the same merge
 *   key are applied by one statement ({@link MergeableWrite}).
 * - **Contention.** On a busy lock the whole group rolls back and is retried on timers until
 *   each write's deadline ({@link LockWait}); other errors are never retried. With a
 *   {@link HandoffQueue}, writers of several processes take turns; with {@link SharedCommits},
 *   the lock holder commits the appends others posted ({@link PostedWrites}).
 * - **Event loop.** A caller awaiting one write after another would keep the loop in the
 *   microtask queue; after `YIELD_AFTER_MS` of that, promises settle after a `setImmediate`.
 * - **WAL.** Checkpoints after commits, and escalation when the WAL outgrows its bound
 *   ({@link WalCheckpoints}), on this connection. A damaged file stops
 *   all writing ({@link CorruptionGuard}).
 */
export class WriteQueue {
  readonly #stats: WriteStats = createWriteStats();
  readonly #conn: DatabaseConnection;
  readonly #policy: WritePolicy;
  readonly #pending: WriteJob[] = [];
  #draining = false;
  /** Inside {@link together}: queued writes wait for its end to start. */
  #gathering = false;
  #idle: Promise<void> = Promise.resolve();
  #markIdle: () => void = () => {};
  /**
   * When writes began to settle without the event loop getting a turn (a chain of awaited
   * writes); cleared by a `setImmediate` as soon as the loop turns.
   */
  #syncSince: number | undefined;
  readonly #guard: CorruptionGuard;
  readonly #wal: WalCheckpoints;
  readonly #posted: PostedWrites;
  readonly #lock: LockWait;
  readonly #transaction: GroupTransaction;
  readonly #indexRepair: IndexRepair | undefined;
  /** The cross-process queue of waiting writers, when this file has one (see HandoffQueue). */
  readonly #turns: HandoffQueue | undefined;
  /** Group commit with other processes' writers, when on (see SharedCommits). */
  readonly #shared: SharedCommits | undefined;

  constructor(
    conn: DatabaseConnection,
    policy: WritePolicy,
    walSize: () => number = () => 0,
    indexRepair?: IndexRepair,
    turns?: HandoffQueue,
    shared?: SharedCommits,
    pacing?: MergePacing,
  ) {
    this.#conn = conn;
    this.#turns = turns;
    this.#shared = turns === undefined ? undefined : shared;
    this.#policy = { ...policy, maxGroupSize: Math.max(1, Math.floor(policy.maxGroupSize)) };
    this.#indexRepair = indexRepair;
    this.#guard = new CorruptionGuard(conn.path);
    this.#wal = new WalCheckpoints(conn, this.#policy, walSize, this.#stats, this.#guard);
    this.#posted = new PostedWrites(this.#shared, turns, this.#stats, this.#policy.deadlineMs);
    this.#lock = new LockWait(this.#policy, turns, this.#posted, this.#stats);
    this.#transaction = new GroupTransaction(conn, this.#posted, indexRepair, pacing);
  }

  /** Whether a damaged database file was seen; then writes and checkpoints are refused. */
  get corrupted(): boolean {
    return this.#guard.corrupted;
  }

  /**
   * Records `error` if it shows the database file damaged (reads report theirs here too), so
   * that no later write or checkpoint touches the file. Other errors are ignored.
   */
  noteError(error: unknown): void {
    this.#guard.noteError(error);
  }

  /** A snapshot of the counters. */
  get stats(): WriteStats {
    return writeStatsSnapshot(this.#stats, this.#turns, this.#shared);
  }

  /**
   * Queues `fn` to run inside a write transaction (possibly shared with other writes of this
   * process, inside its own savepoint); resolves with its result after COMMIT.
   *
   * `fn` must be synchronous and may run more than once (a busy lock re-runs the whole group),
   * so it must not have effects outside the database. An error it throws rolls back its writes
   * and rejects only this call.
   */
  run<T>(label: string, fn: () => T, merge?: MergeableWrite<T>): Promise<T> {
    return this.#enqueue(label, "transaction", fn, merge);
  }

  /**
   * Queues `fn` to run alone, outside any transaction, once every earlier write has settled and
   * before any later one starts: for statements SQLite refuses inside a transaction (`VACUUM`).
   * Busy/locked errors are retried on timers until the deadline, like any write.
   *
   * @example
   * await ctx.writes.exclusive("vacuum", () => ctx.conn.exec("VACUUM"));
   */
  exclusive<T>(label: string, fn: () => T): Promise<T> {
    return this.#enqueue(label, "exclusive", fn);
  }

  /**
   * Runs `fn`, which queues writes, and starts them only once it returns: writes that reached
   * the writer thread in one message (made in one tick of their caller's thread, or answered
   * together and written again at once) commit as one group. Without it the first would commit
   * alone inside its call, as a lone write does, and the others after it: two fsyncs.
   */
  together(fn: () => void): void {
    if (this.#gathering) {
      fn();
      return;
    }
    this.#gathering = true;
    try {
      fn();
    } finally {
      this.#gathering = false;
      if (!this.#draining && this.#pending.length > 0) this.#startDrain();
    }
  }

  /** Resolves when every queued write has settled. */
  whenIdle(): Promise<void> {
    return this.#idle;
  }

  /**
   * Runs `PRAGMA wal_checkpoint(mode)` outside any transaction; never throws (a busy checkpoint
   * is not an error). Returns whether it completed (`busy = 0`).
   */
  checkpoint(mode: "PASSIVE" | "FULL" | "RESTART" | "TRUNCATE"): boolean {
    return this.#wal.checkpoint(mode);
  }

  #enqueue<T>(label: string, kind: WriteJob["kind"], fn: () => T, merge?: MergeableWrite<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#guard.corrupted) {
        this.#stats.failedWrites++;
        reject(this.#guard.refusal());
        return;
      }
      const job: WriteJob = {
        label,
        kind,
        fn,
        merge,
        resolve: (value) => this.#deliver(() => resolve(value as T)),
        reject: (error) => this.#deliver(() => reject(error)),
        enqueuedAt: performance.now(),
        attempts: 0,
      };
      this.#pending.push(job);
      // Idle: start now. The drain's first attempt runs synchronously, inside this call, so a
      // lone write commits at once; calls made while it is draining (from this very tick on)
      // queue up and form the next group.
      if (!this.#draining && !this.#gathering) this.#startDrain();
    });
  }

  #startDrain(): void {
    this.#draining = true;
    this.#idle = new Promise((r) => {
      this.#markIdle = r;
    });
    void this.#drain();
  }

  /**
   * Settles a write's promise: at once, or after a `setImmediate` once writes have settled for
   * YIELD_AFTER_MS without the event loop getting a turn. A caller awaiting one write after
   * another never leaves the microtask queue otherwise (each promise settles inside the next
   * call), which starves timers and I/O for as long as it writes. Only the delivery waits: the
   * write itself has committed, and grouping is as ever.
   */
  #deliver(settle: () => void): void {
    const now = performance.now();
    if (this.#syncSince === undefined) {
      this.#syncSince = now;
      setImmediate(() => {
        this.#syncSince = undefined;
      });
    }
    if (now - this.#syncSince >= YIELD_AFTER_MS) setImmediate(settle);
    else settle();
  }

  async #drain(): Promise<void> {
    try {
      for (let lastGroup = 0; ; ) {
        // Between groups, when writes are coming concurrently (a group of several, or more
        // queued), let the callers whose writes just committed run first: their next writes join
        // the next group instead of trickling in one per transaction. A lone sequential writer
        // skips this turn, so its next write starts (and commits) inside its own call.
        if (lastGroup > 1 || (lastGroup === 1 && this.#pending.length > 0)) await nextTurn();
        if (this.#pending.length === 0) break;
        if (this.#wal.pressure) await this.#wal.relieve();
        lastGroup = await this.#runGroup();
      }
    } catch (error) {
      // Unreachable by design (every job error is routed to its promise); never strand callers.
      for (const job of this.#pending.splice(0)) job.reject(error);
    } finally {
      this.#turns?.leave(); // nothing left to write: never hold a place in the queue
      this.#draining = false;
      this.#markIdle();
    }
  }

  /** The next group: consecutive transaction jobs up to the limit, or one exclusive job. */
  #nextGroup(): WriteJob[] {
    const first = this.#pending[0];
    if (first === undefined) return [];
    if (first.kind === "exclusive") return [first];
    let n = 1;
    while (n < this.#policy.maxGroupSize && this.#pending[n]?.kind === "transaction") n++;
    return this.#pending.slice(0, n);
  }

  /**
   * Commits the group at the head of the queue, waiting on timers while the lock is busy.
   * Returns how many writes it settled.
   */
  async #runGroup(): Promise<number> {
    const pending = this.#pending;
    const posted = this.#posted;
    this.#lock.reset();
    for (;;) {
      // Re-formed on each attempt: writes that arrived while we waited for the lock join in.
      const group = this.#nextGroup();
      if (group.length === 0) return 0;
      if (this.#guard.corrupted) return this.#refuse(group);
      const turns = this.#turns;
      if (turns?.turn() === "queue") {
        // A writer of another process has waited longer: queue behind it rather than race it.
        const settled = await this.#lock.deferToOlder(pending);
        if (settled > 0) return settled;
        continue;
      }
      // Other processes wrote lately: post first, so that whoever holds the lock commits these
      // writes too, and try the lock without waiting in SQLite's (blocking) busy handler.
      if (posted.eager) posted.post(pending);
      this.#stats.attempts++;
      for (const job of group) job.attempts++;
      const result =
        group[0]?.kind === "exclusive"
          ? this.#transaction.attemptExclusive(group[0])
          : posted.posted
            ? this.#conn.withoutBusyWait(() => this.#transaction.attempt(group))
            : this.#transaction.attempt(group);
      if (turns !== undefined && result.kind !== "busy") {
        // The lock was held and is free again: the oldest waiting process's turn, even when the
        // head is an owner just woken for its receipt (it may have queued again). Handing off
        // after every commit, not every few: see docs/design/contention.md.
        turns.leave();
        turns.handOff();
      }
      switch (result.kind) {
        case "committed":
          pending.splice(0, group.length);
          this.#committed(group, result.outcomes);
          return group.length;
        case "failed":
          pending.splice(0, group.length);
          this.#settle(group, result.outcomes);
          return group.length;
        case "aborted": {
          const culprit = group[result.culprit];
          this.#guard.noteError(result.error);
          if (culprit !== undefined) {
            pending.splice(result.culprit, 1);
            this.#stats.failedWrites++;
            culprit.reject(mapSqliteError(result.error, this.#conn.path));
          }
          continue; // the others re-run at once in a fresh transaction
        }
        case "receipt": {
          const settled = posted.takeReceipt(pending, result.receipt);
          if (settled > 0) return settled;
          continue;
        }
        case "retry":
          continue;
        case "merge-lost":
          // Nothing of the group was kept; the merged jobs re-run one by one, in savepoints.
          for (const job of group.slice(result.from, result.to)) job.mergeFailed = true;
          continue;
        case "index-damaged":
          if (this.#repairIndex(group, result.culprit, result.error) === "busy") {
            await this.#lock.afterBusyRepair(pending, result.error);
          }
          continue;
        case "busy": {
          const settled = await this.#lock.afterBusy(pending, result.error);
          if (settled > 0) return settled;
        }
      }
    }
  }

  /**
   * A write of `group` (or the group's COMMIT: `culprit` null) met a damaged search index:
   * rebuilds it, and the whole group re-runs. If the rebuild fails (e.g. `messages` itself is
   * damaged), the culprits fail, typed. `busy`: another connection holds the lock.
   */
  #repairIndex(group: WriteJob[], culprit: number | null, error: unknown): "again" | "busy" {
    const at = culprit ?? 0;
    const culprits = culprit === null ? group : group.slice(at, at + 1);
    const repair = runIndexRepair(this.#conn, this.#indexRepair);
    if (repair === "busy") return "busy";
    if (repair === "repaired") {
      for (const job of culprits) job.indexRepaired = true;
      return "again";
    }
    this.#guard.noteError(repair.error);
    this.#pending.splice(at, culprits.length);
    this.#stats.failedWrites += culprits.length;
    for (const job of culprits) job.reject(mapSqliteError(error, this.#conn.path));
    return "again";
  }

  /**
   * Refuses the group, queued before the damage was seen, like any later write. Posted writes
   * are refused only once withdrawn, or once a holder that claimed them had time to commit.
   */
  async #refuse(group: WriteJob[]): Promise<number> {
    const settled = await this.#posted.settleForRefusal(this.#pending);
    if (settled > 0) return settled;
    this.#pending.splice(0, group.length);
    this.#stats.failedWrites += group.length;
    for (const job of group) job.reject(this.#guard.refusal());
    return group.length;
  }

  #committed(group: WriteJob[], outcomes: JobOutcome[]): void {
    let ok = 0;
    for (const o of outcomes) if (o.ok) ok++;
    this.#stats.writes += ok;
    this.#stats.groupsCommitted++;
    if (ok > this.#stats.writesPerGroupMax) this.#stats.writesPerGroupMax = ok;
    this.#wal.afterCommit(ok > 0);
    this.#settle(group, outcomes);
  }

  #settle(group: WriteJob[], outcomes: JobOutcome[]): void {
    group.forEach((job, i) => {
      const o = outcomes[i];
      if (o?.ok) job.resolve(o.value);
      else {
        this.#guard.noteError(o?.error);
        this.#stats.failedWrites++;
        job.reject(mapSqliteError(o?.error, this.#conn.path));
      }
    });
  }
}
