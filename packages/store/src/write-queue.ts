import { setImmediate as nextTurn } from "node:timers/promises";
import { BackendError, type SqliteStoreStats, StoreBusyError, StoreCorruptError } from "@hermes/core";
import type { DatabaseConnection } from "./database-connection.js";
import type { HandoffQueue } from "./handoff-queue.js";
import type { ClaimedRequest, Receipt, SharedCommits } from "./shared-commits.js";
import { isBusyError, isFileCorruption, mapSqliteError, sqliteCode } from "./sqlite-errors.js";

/**
 * Spreads a derived index's merge work evenly over the transactions that write several rows,
 * instead of leaving all of it to the one transaction in many that crosses the index's own
 * threshold (see search-merge-pacing.ts). Both run inside the write transaction.
 */
export interface MergePacing {
  /** Right after `BEGIN IMMEDIATE`: suspends the index's own merging for this transaction. */
  readonly hold: () => void;
  /**
   * Just before `COMMIT`: a bounded share of merge work, then the setting as it was. Throws when
   * the setting could not be restored; the transaction must then not commit.
   */
  readonly release: () => void;
}

/** How writes wait for the lock held by another connection, and how they are grouped. */
export interface WritePolicy {
  /** Total patience of one write, in ms, from the call; past it the write fails with `STORE_BUSY`. */
  readonly deadlineMs: number;
  /** First backoff between attempts, in ms (jittered). */
  readonly backoffMinMs: number;
  /** Largest backoff between attempts, in ms. */
  readonly backoffMaxMs: number;
  /**
   * PASSIVE checkpoint after this many committed transactions that wrote (the reference uses 50;
   * there each write is one transaction). A group commit counts once.
   */
  readonly checkpointEvery: number;
  /** Most writes committed together in one transaction (group commit); 1 disables grouping. */
  readonly maxGroupSize: number;
  /**
   * WAL size, in bytes, above which the queue escalates from PASSIVE to TRUNCATE checkpoints and,
   * if readers keep old snapshots, briefly holds this process's writes back so they can let go.
   */
  readonly walMaxBytes: number;
  /**
   * WAL size, in bytes, past which a commit that grows the WAL file is followed by a RESTART
   * checkpoint (it waits only the busy timeout). Several processes writing back to back never
   * leave the quiet moment SQLite needs to reset the WAL after PASSIVE checkpoints; RESTART
   * makes one.
   */
  readonly walRestartBytes: number;
  /** Longest time, in ms, writes are held back while escalating a checkpoint, per escalation. */
  readonly walPauseBudgetMs: number;
}

export const DEFAULT_WRITE_POLICY: WritePolicy = {
  deadlineMs: 30_000,
  backoffMinMs: 1,
  backoffMaxMs: 4,
  checkpointEvery: 50,
  maxGroupSize: 64,
  walMaxBytes: 32 * 1024 * 1024,
  walRestartBytes: 4 * 1024 * 1024,
  walPauseBudgetMs: 250,
};

/**
 * Repair of a derived index (the search index) that a write unit found damaged
 * (`SQLITE_CORRUPT_VTAB`): the index is rebuilt from the tables it mirrors, in a transaction of
 * its own, and the write is run again once.
 */
export interface IndexRepair {
  /** Whether a failure of the write unit named `label` may be repaired (not the index's own maintenance). */
  readonly appliesTo: (label: string) => boolean;
  /** Rebuilds the index; runs synchronously inside `BEGIN IMMEDIATE … COMMIT`. */
  readonly run: () => void;
}

/** Counters of the write path, readable through `store.stats()` (every field but the WAL size). */
export type WriteStats = Omit<SqliteStoreStats, "backend" | "walBytes">;

/**
 * A write unit that can also be applied together with its queued neighbours in one statement.
 *
 * Why: inside a transaction, every statement that writes through a trigger opens a statement
 * savepoint, and FTS5 flushes its pending terms to disk at each savepoint. So N appends made as N
 * statements write N tiny segments per FTS table (and pay the automerge work for each), which
 * costs as much CPU as the WAL sync group commit saves. One multi-row statement flushes once.
 */
export interface MergeableWrite<T> {
  /** Consecutive queued writes with the same key are merged. */
  readonly key: string;
  /** This write's input, handed to `many` with its neighbours'. */
  readonly item: unknown;
  /**
   * Applies the items of consecutive writes with this key, in queue order, inside the group's
   * transaction; returns one result per item, in order (each the result `fn` would give). If it
   * throws, its effects are rolled back and each of those writes runs alone through its own `fn`
   * instead, so a failure still rejects only the write that caused it.
   */
  readonly many: (items: readonly unknown[]) => readonly T[];
}

/** One queued write: a transaction body, or an exclusive unit that runs outside any transaction. */
interface Job {
  readonly label: string;
  readonly kind: "transaction" | "exclusive";
  readonly fn: () => unknown;
  /** How this write merges with its neighbours, when it can. */
  readonly merge: MergeableWrite<unknown> | undefined;
  /** Set when a merged attempt lost the whole transaction: this write then runs alone. */
  mergeFailed?: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** `performance.now()` at the call: the deadline counts from here. */
  readonly enqueuedAt: number;
  attempts: number;
  /** Set once a repair of the search index was tried for this job (it is never tried twice). */
  indexRepaired?: boolean;
  /** Set when another process declined to apply this write: it is written here, never posted again. */
  noShare?: boolean;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** A group's fate when an attempt did not simply commit. */
type GroupResult =
  | { kind: "committed"; outcomes: Outcome[] }
  | { kind: "busy"; error: unknown }
  /** The whole transaction failed (COMMIT error, or SQLite rolled everything back): no write kept. */
  | { kind: "failed"; outcomes: Outcome[] }
  /** SQLite rolled the whole transaction back because of one job: reject it, re-run the others. */
  | { kind: "aborted"; culprit: number; error: unknown }
  /**
   * SQLite rolled the whole transaction back during a merged statement (jobs `from` to `to`,
   * exclusive): the group re-runs with those jobs applied one by one, which finds the culprit.
   */
  | { kind: "merge-lost"; from: number; to: number }
  /**
   * A job (or, at COMMIT, the group: `culprit` null) met a damaged search index
   * (`SQLITE_CORRUPT_VTAB`); the transaction was rolled back.
   */
  | { kind: "index-damaged"; culprit: number | null; error: unknown }
  /** The group's head was posted, and another process's transaction settled it (see SharedCommits). */
  | { kind: "receipt"; receipt: Receipt }
  /**
   * Nothing was committed, and the group re-runs at once: the transaction was lost while applying
   * other processes' writes (the next attempt serves none), or merge pacing failed (dropped).
   */
  | { kind: "retry" };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Longest wait, in ms, of a write queued behind an older waiter of another process before it
 * looks at the queue again (it is normally woken before): the safety net for a lost wake-up.
 */
const QUEUED_WAIT_MS = 5;

/**
 * Longest stretch, in ms, of writes settled without the event loop getting a turn (a caller
 * awaiting one write after another); then promises settle after a `setImmediate`.
 */
const YIELD_AFTER_MS = 5;

/**
 * Longest wait, in ms, of a write whose appends are posted, before it looks again (the holder
 * that commits them wakes it; the timer is the safety net).
 */
const POSTED_WAIT_MS = 20;

/** Most writes of other processes one transaction applies (it holds the lock meanwhile). */
const SERVE_LIMIT = 256;

/** Most writes of this process posted in one request for another process to commit. */
const POST_LIMIT = 64;

/**
 * For this long, in ms, after this store last met another process's writer (a busy lock, a
 * turn, a write committed for or by another process), it posts its appends before it tries the
 * lock, and does not wait in SQLite's busy handler: whoever holds the lock commits them.
 */
const EAGER_POST_MS = 50;

/** How long a damaged store waits for the receipt of posted writes a holder claimed, in ms. */
const CLAIM_GRACE_MS = 1_000;

/**
 * The one way this process writes: a FIFO of write units applied in `BEGIN IMMEDIATE … COMMIT`
 * transactions on the single writer connection.
 *
 * - **Order.** Units apply in call order; no `await` inside a transaction (better-sqlite3
 *   transactions are synchronous), so writers of this process never interleave.
 * - **Group commit.** A lone write commits at once, inside the call. Writes that arrive while a
 *   transaction is committing (or waiting for the lock) form the next group: one transaction,
 *   each write in its own `SAVEPOINT`, so a write that fails rolls back alone and rejects only
 *   its own promise. Promises settle only after `COMMIT`, so a resolved write is as durable as
 *   a lone one. At `synchronous = FULL` the WAL sync dominates, and a group pays it once.
 * - **Merged writes.** Consecutive writes of a group that declare the same merge key (appends)
 *   are applied by one multi-row statement in one savepoint, so the FTS indexes flush once per
 *   group instead of once per write; if that statement fails, it is rolled back and those writes
 *   run one by one, each in its own savepoint, so the failure still rejects only its own write.
 * - **Contention.** SQLite's own busy handler is kept to milliseconds (it blocks the event loop);
 *   on a busy/locked error the whole group rolls back and is retried after a jittered, growing
 *   backoff on a timer, until each write's deadline; an expired write gets `STORE_BUSY` with
 *   nothing written. Other errors are never retried.
 * - **Turns across processes.** With a {@link HandoffQueue}, a write that finds a writer of
 *   another process waiting longer queues behind it and is woken in its turn; each commit wakes
 *   the oldest waiter.
 * - **Group commit across processes.** With {@link SharedCommits}, appends waiting for the lock
 *   are posted, and the process that holds the lock applies them in its own transaction with a
 *   receipt each; the owner settles them from the receipts. Each write still applies once, in
 *   call order per process.
 * - **Event loop.** A caller awaiting one write after another would keep the loop in the
 *   microtask queue; after `YIELD_AFTER_MS` of that, promises settle after a `setImmediate`.
 * - **WAL.** PASSIVE checkpoint every `checkpointEvery` transactions; a RESTART checkpoint when the
 *   WAL grows past `walRestartBytes` (busy writers never leave SQLite a quiet moment to reset it
 *   after PASSIVE ones); when the WAL outgrows
 *   `walMaxBytes` (readers holding snapshots starve PASSIVE), TRUNCATE checkpoints, holding this
 *   process's writes back for at most `walPauseBudgetMs` so the readers' snapshots move on.
 */
export class WriteQueue {
  readonly #stats: WriteStats = {
    writes: 0,
    failedWrites: 0,
    groupsCommitted: 0,
    writesPerGroupMean: 0,
    writesPerGroupMax: 0,
    attempts: 0,
    retries: 0,
    busyErrors: 0,
    waitedMs: 0,
    busyTimeouts: 0,
    checkpoints: 0,
    walRestarts: 0,
    walEscalations: 0,
    walBytesMax: 0,
    handoffs: 0,
    deferrals: 0,
    sharedWrites: 0,
    servedWrites: 0,
  };
  readonly #conn: DatabaseConnection;
  readonly #policy: WritePolicy;
  readonly #walSize: () => number;
  #pending: Job[] = [];
  #draining = false;
  #idle: Promise<void> = Promise.resolve();
  #markIdle: () => void = () => {};
  /** Set when the WAL outgrew `walMaxBytes`: escalate before the next group. */
  #walPressure = false;
  /**
   * WAL size that triggers the next escalation: `walMaxBytes`, raised by another `walMaxBytes`
   * after an escalation that could not reset the WAL (a reader holding one snapshot for minutes
   * must not cost every write a pause).
   */
  #walEscalateAt: number;
  /**
   * When writes began to settle without the event loop getting a turn (a chain of awaited
   * writes); cleared by a `setImmediate` as soon as the loop turns.
   */
  #syncSince: number | undefined;
  /** WAL file size at the previous commit. */
  #walLastSize = 0;
  /** Committed transactions that wrote something since the last periodic checkpoint. */
  #transactionsSinceCheckpoint = 0;

  readonly #indexRepair: IndexRepair | undefined;
  /** The cross-process queue of waiting writers, when this file has one (see HandoffQueue). */
  readonly #turns: HandoffQueue | undefined;
  /** Group commit with other processes' writers, when on (see SharedCommits). */
  readonly #shared: SharedCommits | undefined;
  /** Set when a transaction was lost while serving other processes: the next attempt serves none. */
  #skipServing = false;
  /** When this store last met a writer of another process (see EAGER_POST_MS). */
  #contendedAt = Number.NEGATIVE_INFINITY;
  /** Merge pacing of the search index; dropped for good if it ever fails to restore its setting. */
  #pacing: MergePacing | undefined;
  /**
   * The first error that showed the database file itself damaged (`SQLITE_CORRUPT`, not a
   * search index). From then on nothing is written or checkpointed: a write or a checkpoint
   * could overwrite pages that a recovery tool can still read.
   */
  #corruption: unknown;

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
    this.#walSize = walSize;
    this.#walEscalateAt = policy.walMaxBytes;
    this.#indexRepair = indexRepair;
    this.#pacing = pacing;
  }

  /** Whether a damaged database file was seen; then writes and checkpoints are refused. */
  get corrupted(): boolean {
    return this.#corruption !== undefined;
  }

  /**
   * Records `error` if it shows the database file damaged (reads report theirs here too), so
   * that no later write or checkpoint touches the file. Other errors are ignored.
   */
  noteError(error: unknown): void {
    if (this.#corruption !== undefined) return;
    const cause = error instanceof StoreCorruptError ? (error.cause ?? error) : error;
    if (isFileCorruption(cause)) this.#corruption = cause;
  }

  #refusal(): StoreCorruptError {
    return new StoreCorruptError(
      this.#conn.path,
      `The database ${this.#conn.path} was found damaged earlier; this store writes nothing more to it ` +
        "(a write or checkpoint could overwrite what a recovery can still read). Keep a copy of the " +
        "file and run 'hermes-sessions doctor'.",
      { cause: this.#corruption },
    );
  }

  /** A snapshot of the counters. */
  get stats(): WriteStats {
    const s = this.#stats;
    return {
      ...s,
      // This store's own writes per transaction it committed (not those another process
      // committed for it, which are in `writes` but in none of its transactions).
      writesPerGroupMean:
        s.groupsCommitted === 0 ? 0 : (s.writes - (this.#shared?.sharedWrites ?? 0)) / s.groupsCommitted,
      handoffs: this.#turns?.handoffs ?? 0,
      deferrals: this.#turns?.deferrals ?? 0,
      sharedWrites: this.#shared?.sharedWrites ?? 0,
      servedWrites: this.#shared?.servedWrites ?? 0,
    };
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

  /** Resolves when every queued write has settled. */
  whenIdle(): Promise<void> {
    return this.#idle;
  }

  #enqueue<T>(label: string, kind: Job["kind"], fn: () => T, merge?: MergeableWrite<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#corruption !== undefined) {
        this.#stats.failedWrites++;
        reject(this.#refusal());
        return;
      }
      const job: Job = {
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
      if (!this.#draining) {
        this.#draining = true;
        this.#idle = new Promise((r) => {
          this.#markIdle = r;
        });
        void this.#drain();
      }
    });
  }

  /**
   * Settles a write's promise: at once, or after a `setImmediate` once writes have settled for
   * YIELD_AFTER_MS without the event loop getting a turn. A caller awaiting one write after
   * another never leaves the microtask queue otherwise (each promise settles inside the next
   * call), which starved timers and I/O for as long as it wrote (1,000 appends: a second without
   * one timer). Only the delivery waits: the write itself has committed, and grouping is as ever.
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
        if (this.#walPressure) await this.#relieveWal();
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
  #nextGroup(): Job[] {
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
    let backoff = this.#policy.backoffMinMs;
    for (;;) {
      // Re-formed on each attempt: writes that arrived while we waited for the lock join in.
      const group = this.#nextGroup();
      if (group.length === 0) return 0;
      if (this.#corruption !== undefined) {
        // Queued before the damage was seen: refused like any later write. Posted writes are
        // refused only once withdrawn, or once a holder that claimed them had time to commit.
        const settled = await this.#settlePostedForRefusal();
        if (settled > 0) return settled;
        this.#pending.splice(0, group.length);
        this.#stats.failedWrites += group.length;
        for (const job of group) job.reject(this.#refusal());
        return group.length;
      }
      const turns = this.#turns;
      if (turns?.turn() === "queue") {
        // A writer of another process has waited longer: queue behind it rather than race it
        // for the lock; it wakes this one when its turn comes (the timer is a safety net).
        turns.enqueue();
        turns.deferrals++;
        this.#contendedAt = performance.now();
        this.#expire(undefined);
        if (this.#pending.length === 0) return 0;
        this.#post();
        // Look again now that this store is in the queue: a holder that released the lock
        // between the first look and the enqueue did not see this store to wake it.
        if (turns.turn() !== "queue") continue;
        const before = performance.now();
        await turns.wait(Math.min(this.#waitInQueue(true, QUEUED_WAIT_MS), this.#remaining()));
        this.#stats.waitedMs += performance.now() - before;
        const settled = this.#checkPosted();
        if (settled > 0) return settled;
        continue;
      }
      // Other processes wrote lately: post first, so that whoever holds the lock commits these
      // writes too, and try the lock without waiting in SQLite's (blocking) busy handler.
      const eager = this.#shared !== undefined && performance.now() - this.#contendedAt < EAGER_POST_MS;
      if (eager) this.#post();
      this.#stats.attempts++;
      for (const job of group) job.attempts++;
      const result =
        group[0]?.kind === "exclusive"
          ? this.#attemptExclusive(group[0])
          : this.#shared?.postedCount !== undefined
            ? this.#conn.withoutBusyWait(() => this.#attempt(group))
            : this.#attempt(group);
      if (turns !== undefined && result.kind !== "busy") {
        // The lock was held and is free again: the oldest waiting process's turn. (Letting this
        // process go on with its next write for two or three commits measured no faster at 8
        // processes, and its tail was longer.)
        turns.leave();
        // (Even when the head is an owner just woken for its receipt: it may have queued again.)
        turns.handOff();
      }
      switch (result.kind) {
        case "committed":
          this.#pending.splice(0, group.length);
          this.#committed(group, result.outcomes);
          return group.length;
        case "failed":
          this.#pending.splice(0, group.length);
          this.#settle(group, result.outcomes);
          return group.length;
        case "aborted": {
          const culprit = group[result.culprit];
          this.noteError(result.error);
          if (culprit !== undefined) {
            this.#pending.splice(result.culprit, 1);
            this.#stats.failedWrites++;
            culprit.reject(mapSqliteError(result.error, this.#conn.path));
          }
          continue; // the others re-run at once in a fresh transaction
        }
        case "receipt": {
          const settled = this.#takeReceipt(result.receipt);
          if (settled > 0) return settled;
          continue;
        }
        case "retry":
          continue;
        case "merge-lost":
          // Nothing of the group was kept; the merged jobs re-run one by one, in savepoints.
          for (const job of group.slice(result.from, result.to)) job.mergeFailed = true;
          continue;
        case "index-damaged": {
          const at = result.culprit ?? 0;
          const culprits = result.culprit === null ? group : group.slice(at, at + 1);
          const repair = this.#repairIndex();
          if (repair === "repaired") {
            for (const job of culprits) job.indexRepaired = true;
            continue; // the whole group re-runs against the rebuilt index
          }
          if (repair !== "busy") {
            // The rebuild failed (e.g. `messages` itself is damaged): the write fails, typed.
            this.noteError(repair.error);
            this.#pending.splice(at, culprits.length);
            this.#stats.failedWrites += culprits.length;
            for (const job of culprits) job.reject(mapSqliteError(result.error, this.#conn.path));
            continue;
          }
          // Another connection holds the lock: wait like any busy attempt, then re-run.
          this.#stats.busyErrors++;
          this.#expire(result.error);
          if (this.#pending.length === 0) return 0;
          this.#stats.retries++;
          await sleep(backoff);
          backoff = Math.min(backoff * 2, this.#policy.backoffMaxMs);
          continue;
        }
        case "busy": {
          this.#stats.busyErrors++;
          this.#contendedAt = performance.now();
          this.#expire(result.error);
          if (this.#pending.length === 0) return 0;
          const remaining = this.#remaining();
          // Full jitter: spread competing processes so they do not wake in lockstep.
          const delay = Math.max(0, Math.min(remaining, backoff / 2 + Math.random() * (backoff / 2)));
          backoff = Math.min(backoff * 2, this.#policy.backoffMaxMs);
          this.#stats.retries++;
          const before = performance.now();
          if (turns === undefined) await sleep(delay);
          else {
            // In the queue: the head polls on the backoff (the holder may be a process that
            // hands nothing off); the others wait for their wake-up.
            turns.enqueue();
            this.#post();
            await turns.wait(Math.min(this.#waitInQueue(turns.turn() === "queue", delay), remaining));
          }
          this.#stats.waitedMs += performance.now() - before;
          const settled = this.#checkPosted();
          if (settled > 0) return settled;
        }
      }
    }
  }

  /** Time left, in ms, before the oldest queued write's deadline. */
  #remaining(): number {
    const oldest = this.#pending[0];
    return oldest === undefined ? 0 : oldest.enqueuedAt + this.#policy.deadlineMs - performance.now();
  }

  /** Rejects, with `STORE_BUSY`, the queued writes whose deadline has passed (a FIFO prefix). */
  #expire(cause: unknown): void {
    const now = performance.now();
    const head = this.#pending[0];
    if (
      this.#shared?.postedCount !== undefined &&
      head !== undefined &&
      now - head.enqueuedAt >= this.#policy.deadlineMs &&
      !this.#shared.withdraw()
    ) {
      // Another process claimed the posted writes: they may be committed at this very moment,
      // so "nothing was written" cannot be said. Their receipt, or this process holding the
      // lock, settles them shortly (holders take no request close to its deadline).
      return;
    }
    let n = 0;
    for (const job of this.#pending) {
      if (now - job.enqueuedAt < this.#policy.deadlineMs) break;
      n++;
    }
    for (const job of this.#pending.splice(0, n)) {
      this.#stats.busyTimeouts++;
      this.#stats.failedWrites++;
      job.reject(new StoreBusyError(Math.max(1, job.attempts), now - job.enqueuedAt, { cause }));
    }
  }

  /**
   * Posts the writes at the head of the queue for the process holding the lock to commit, when
   * they can be shared (consecutive writes of one shareable kind) and none is posted yet.
   */
  #post(): void {
    const shared = this.#shared;
    if (shared === undefined || shared.postedCount !== undefined) return;
    const key = this.#pending[0]?.merge?.key;
    if (key === undefined || !shared.handles(key)) return;
    const items: unknown[] = [];
    for (const job of this.#pending) {
      if (items.length >= POST_LIMIT || job.kind !== "transaction" || job.merge?.key !== key) break;
      if (job.mergeFailed === true || job.noShare === true) break;
      items.push(job.merge.item);
    }
    if (items.length === 0) return;
    // A holder must not apply the request so late that the owner could be giving up: it gets
    // half of the time left, at most a second short of the deadline.
    const remaining = this.#remaining();
    shared.post(key, items, remaining - Math.min(1000, remaining / 2));
  }

  /**
   * Before refusing the queued writes (the file is damaged): withdraws the posted ones, or, if a
   * holder claimed them, waits up to CLAIM_GRACE_MS for its receipt (it commits within
   * milliseconds; one that does not has died, and then wrote nothing). Returns how many writes
   * a receipt settled.
   */
  async #settlePostedForRefusal(): Promise<number> {
    const shared = this.#shared;
    if (shared === undefined || shared.postedCount === undefined || shared.withdraw()) return 0;
    for (const started = performance.now(); performance.now() - started < CLAIM_GRACE_MS; ) {
      await sleep(1);
      const settled = this.#checkPosted();
      if (settled > 0) return settled;
      if (shared.postedCount === undefined) return 0;
    }
    shared.forget();
    return 0;
  }

  /**
   * How long a write in the queue sleeps unless woken. Posted writes are committed by whoever
   * takes the lock next (the head, or a store holding it now), which wakes their owner: the
   * timer is only a safety net. Otherwise a write behind the head waits to be woken, and the
   * head polls on its backoff (`headDelay`: the holder may be a process that hands nothing off).
   */
  #waitInQueue(behindHead: boolean, headDelay: number): number {
    const posted = this.#shared?.postedCount !== undefined;
    if (posted && (behindHead || this.#turns?.holderSeen === true)) return POSTED_WAIT_MS;
    return behindHead ? QUEUED_WAIT_MS : headDelay;
  }

  /** After a wait: settles the posted writes if another process has committed them. */
  #checkPosted(): number {
    const receipt = this.#shared?.check();
    if (receipt === undefined) return 0;
    this.#contendedAt = performance.now();
    if (receipt.applied) {
      // Served: this process leaves the queue as if it had committed, and the next waiter,
      // which may be the new head, gets its turn now rather than on its timer.
      this.#turns?.leave();
      this.#turns?.handOff();
    }
    return this.#takeReceipt(receipt);
  }

  /**
   * Settles the posted writes (the head of the queue) from their receipt; returns how many. A
   * declined request (it failed there) is written by this process, which meets its own error.
   */
  #takeReceipt(receipt: Receipt): number {
    if (!receipt.applied) {
      for (const job of this.#pending.slice(0, receipt.count)) job.noShare = true;
      return 0;
    }
    const jobs = this.#pending.splice(0, receipt.values.length);
    this.#stats.writes += jobs.length;
    if (this.#shared !== undefined) this.#shared.sharedWrites += jobs.length;
    for (let i = 0; i < jobs.length; i++) jobs[i]?.resolve(receipt.values[i]);
    return jobs.length;
  }

  #committed(group: Job[], outcomes: Outcome[]): void {
    let ok = 0;
    for (const o of outcomes) if (o.ok) ok++;
    this.#stats.writes += ok;
    this.#stats.groupsCommitted++;
    if (ok > this.#stats.writesPerGroupMax) this.#stats.writesPerGroupMax = ok;
    // The cadence counts transactions that wrote, as the reference does (there every write is one
    // transaction): a checkpoint moves the WAL's pages, and a group writes its shared pages once.
    // Counting each write of a group ran a checkpoint (two more syncs) every other group.
    if (ok > 0) this.#transactionsSinceCheckpoint++;
    const every = this.#policy.checkpointEvery;
    if (every > 0 && this.#transactionsSinceCheckpoint >= every) {
      this.#transactionsSinceCheckpoint = 0;
      this.checkpoint("PASSIVE");
    }
    this.#watchWal();
    this.#settle(group, outcomes);
  }

  #settle(group: Job[], outcomes: Outcome[]): void {
    group.forEach((job, i) => {
      const o = outcomes[i];
      if (o?.ok) job.resolve(o.value);
      else {
        this.noteError(o?.error);
        this.#stats.failedWrites++;
        job.reject(mapSqliteError(o?.error, this.#conn.path));
      }
    });
  }

  /** One attempt at a group: BEGIN IMMEDIATE, each job in a savepoint, COMMIT. */
  #attempt(group: Job[]): GroupResult {
    const conn = this.#conn;
    try {
      conn.statement("BEGIN IMMEDIATE").run();
    } catch (error) {
      if (isBusyError(error)) return { kind: "busy", error };
      return { kind: "failed", outcomes: group.map(() => ({ ok: false, error })) };
    }
    const shared = this.#shared;
    // Writers of other processes that arrive now post their appends for this transaction.
    if (shared !== undefined) this.#turns?.hold();
    if (shared?.postedCount !== undefined) {
      // Holding the lock, the receipts are the whole truth about the writes this process posted.
      const receipt = shared.settleInLock();
      if (receipt !== "withdrawn") {
        this.#rollback();
        return { kind: "receipt", receipt };
      }
    }
    // A transaction that writes for several callers (here, or in other processes) spreads the
    // search index's merging instead of sometimes doing a large share of it at once.
    const pacing =
      group.length > 1 || (shared !== undefined && performance.now() - this.#contendedAt < EAGER_POST_MS)
        ? this.#pacing
        : undefined;
    if (pacing !== undefined) {
      try {
        pacing.hold();
      } catch (error) {
        return this.#pacingFailed(error, []);
      }
    }
    // A lone write needs no savepoint: rolling back the transaction is rolling back the write.
    const alone = group.length === 1;
    const outcomes: Outcome[] = [];
    // Jobs before this index whose merged statement failed run one by one (not merged again).
    let separateUntil = 0;
    for (let i = 0; i < group.length; i++) {
      const job = group[i] as Job;
      const run = i < separateUntil ? 0 : this.#mergeableRun(group, i);
      if (run > 1) {
        const merged = this.#applyMerged(group.slice(i, i + run));
        if (merged.kind === "applied") {
          for (const value of merged.values) outcomes.push({ ok: true, value });
          i += run - 1;
          continue;
        }
        if (merged.kind === "busy") {
          this.#rollback();
          return { kind: "busy", error: merged.error };
        }
        if (merged.kind === "lost") return { kind: "merge-lost", from: i, to: i + run };
        // "separately": the merged statement was rolled back; these jobs run one by one below.
        separateUntil = i + run;
      }
      if (!alone) conn.statement("SAVEPOINT hermes_write").run();
      try {
        const value = job.fn();
        if (isThenable(value)) {
          throw new BackendError(
            `Write unit '${job.label}' returned a promise; write units must be synchronous`,
          );
        }
        if (!alone) conn.statement("RELEASE hermes_write").run();
        outcomes.push({ ok: true, value });
      } catch (error) {
        if (isBusyError(error)) {
          this.#rollback();
          return { kind: "busy", error };
        }
        if (sqliteCode(error) === "SQLITE_CORRUPT_VTAB" && this.#mayRepair(job)) {
          this.#rollback();
          return { kind: "index-damaged", culprit: i, error };
        }
        if (!conn.inTransaction) {
          // SQLite rolled the whole transaction back (disk full, I/O error, …): nothing of the
          // group is kept; this job is the cause, the others are innocent and re-run.
          return alone
            ? { kind: "failed", outcomes: [{ ok: false, error }] }
            : { kind: "aborted", culprit: i, error };
        }
        if (alone) {
          this.#rollback();
          return { kind: "failed", outcomes: [{ ok: false, error }] };
        }
        try {
          conn.statement("ROLLBACK TO hermes_write").run();
          conn.statement("RELEASE hermes_write").run();
        } catch (rollbackError) {
          this.#rollback();
          return { kind: "aborted", culprit: i, error: rollbackError };
        }
        outcomes.push({ ok: false, error });
      }
    }
    // Then the writes other processes posted while waiting for the lock: one sync for all.
    let served: ClaimedRequest[] = [];
    if (shared !== undefined) {
      if (this.#skipServing) this.#skipServing = false;
      else {
        const serving = shared.serve(SERVE_LIMIT);
        served = serving.claimed;
        if (serving.lost) {
          this.#rollback();
          shared.abandoned(served);
          this.#skipServing = true;
          return { kind: "retry" };
        }
      }
    }
    if (pacing !== undefined) {
      try {
        pacing.release();
      } catch (error) {
        // The index's own setting may not be back: nothing of this transaction may commit.
        return this.#pacingFailed(error, served);
      }
    }
    try {
      conn.statement("COMMIT").run();
      if (served.length > 0) {
        this.#contendedAt = performance.now();
        shared?.committed(served);
      }
    } catch (error) {
      this.#rollback();
      shared?.abandoned(served);
      if (isBusyError(error)) return { kind: "busy", error };
      // FTS5 writes its pending index data at COMMIT: a damaged index may first show here.
      if (sqliteCode(error) === "SQLITE_CORRUPT_VTAB" && group.every((job) => this.#mayRepair(job))) {
        return { kind: "index-damaged", culprit: null, error };
      }
      return { kind: "failed", outcomes: group.map(() => ({ ok: false, error })) };
    }
    return { kind: "committed", outcomes };
  }

  /**
   * Merge pacing threw: the transaction is rolled back, and the group re-runs (after a backoff if
   * the lock was busy). Pacing never fails a write: after any other error it is dropped for good.
   */
  #pacingFailed(error: unknown, served: readonly ClaimedRequest[]): GroupResult {
    this.#rollback();
    this.#shared?.abandoned(served);
    if (isBusyError(error)) return { kind: "busy", error };
    this.#pacing = undefined;
    return { kind: "retry" };
  }

  /** How many jobs from `start` on can be applied as one merged write (0 or 1: none). */
  #mergeableRun(group: Job[], start: number): number {
    const key = group[start]?.merge?.key;
    if (key === undefined || group[start]?.mergeFailed === true) return 0;
    let n = 1;
    while (start + n < group.length) {
      const next = group[start + n] as Job;
      if (next.merge?.key !== key || next.mergeFailed === true) break;
      n++;
    }
    return n;
  }

  /**
   * Applies consecutive mergeable jobs through their `many`, inside a savepoint: `applied` with
   * one value per job; `separately` when it threw and was rolled back (the transaction goes on);
   * `busy`; or `lost` when SQLite rolled back the whole transaction.
   */
  #applyMerged(
    jobs: Job[],
  ):
    | { kind: "applied"; values: readonly unknown[] }
    | { kind: "separately" }
    | { kind: "busy"; error: unknown }
    | { kind: "lost" } {
    const conn = this.#conn;
    const merge = (jobs[0] as Job).merge as MergeableWrite<unknown>;
    try {
      conn.statement("SAVEPOINT hermes_merged").run();
      const values = merge.many(jobs.map((job) => job.merge?.item));
      if (values.length !== jobs.length) {
        throw new Error(
          `merged write '${merge.key}' gave ${values.length} results for ${jobs.length} writes`,
        );
      }
      conn.statement("RELEASE hermes_merged").run();
      return { kind: "applied", values };
    } catch (error) {
      if (isBusyError(error)) return { kind: "busy", error };
      if (!conn.inTransaction) return { kind: "lost" };
      try {
        conn.statement("ROLLBACK TO hermes_merged").run();
        conn.statement("RELEASE hermes_merged").run();
      } catch {
        this.#rollback();
        return { kind: "lost" };
      }
      return { kind: "separately" };
    }
  }

  #mayRepair(job: Job): boolean {
    return job.indexRepaired !== true && this.#indexRepair?.appliesTo(job.label) === true;
  }

  /** Rebuilds the damaged search index in a transaction of its own. */
  #repairIndex(): "repaired" | "busy" | { error: unknown } {
    const repair = this.#indexRepair;
    if (repair === undefined) return { error: new Error("no index repair configured") };
    try {
      this.#conn.statement("BEGIN IMMEDIATE").run();
    } catch (error) {
      return isBusyError(error) ? "busy" : { error };
    }
    try {
      repair.run();
      this.#conn.statement("COMMIT").run();
      return "repaired";
    } catch (error) {
      this.#rollback();
      return isBusyError(error) ? "busy" : { error };
    }
  }

  #attemptExclusive(job: Job): GroupResult {
    try {
      const value = job.fn();
      return { kind: "committed", outcomes: [{ ok: true, value }] };
    } catch (error) {
      if (this.#conn.inTransaction) this.#rollback();
      if (isBusyError(error)) return { kind: "busy", error };
      return { kind: "failed", outcomes: [{ ok: false, error }] };
    }
  }

  #rollback(): void {
    if (!this.#conn.inTransaction) return;
    try {
      this.#conn.statement("ROLLBACK").run();
    } catch {
      // The transaction is already gone (SQLite rolls back on some errors itself).
    }
  }

  /**
   * After each commit (one `stat`, microseconds next to the commit's sync): has the WAL file
   * outgrown its bound? (It only grows when the live log outgrows it.)
   */
  #watchWal(): void {
    const size = this.#walSize();
    // The file size is the WAL's high-water mark, not its live content: after a reset SQLite
    // rewrites the file from the start. So it grows only while the log is longer than ever
    // before, which is the moment to force a reset (not at every commit of a big, reused file).
    const grew = size > this.#walLastSize;
    this.#walLastSize = size;
    if (size > this.#stats.walBytesMax) this.#stats.walBytesMax = size;
    if (size > this.#walEscalateAt) this.#walPressure = true;
    else if (grew && size > this.#policy.walRestartBytes) {
      this.#stats.walRestarts++;
      this.checkpoint("RESTART");
    }
  }

  /**
   * The WAL outgrew its bound: PASSIVE cannot reset it while readers hold snapshots into it.
   * TRUNCATE checkpoints (each waits only the busy timeout for readers), retried on timers for
   * at most `walPauseBudgetMs` while this process starts no new write, so that readers finish
   * their snapshots and new ones read from the database file.
   */
  async #relieveWal(): Promise<void> {
    this.#walPressure = false;
    this.#stats.walEscalations++;
    const started = performance.now();
    let backoff = 1;
    for (;;) {
      const done = this.checkpoint("TRUNCATE");
      const size = this.#walSize();
      if (done || size <= this.#policy.walMaxBytes) {
        this.#walEscalateAt = this.#policy.walMaxBytes;
        return;
      }
      if (performance.now() - started >= this.#policy.walPauseBudgetMs) {
        this.#walEscalateAt = size + this.#policy.walMaxBytes;
        return;
      }
      await sleep(backoff);
      backoff = Math.min(backoff * 2, 16);
    }
  }

  /**
   * Runs `PRAGMA wal_checkpoint(mode)` outside any transaction; never throws (a busy checkpoint
   * is not an error). Returns whether it completed (`busy = 0`).
   */
  checkpoint(mode: "PASSIVE" | "FULL" | "RESTART" | "TRUNCATE"): boolean {
    if (this.#conn.inTransaction || this.#corruption !== undefined) return false;
    try {
      const row = this.#conn.db.pragma(`wal_checkpoint(${mode})`, { simple: false }) as Array<{
        busy?: number;
      }>;
      this.#stats.checkpoints++;
      return row[0]?.busy === 0;
    } catch {
      return false;
    }
  }
}

function isThenable(value: unknown): boolean {
  return (
    typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"
  );
}
