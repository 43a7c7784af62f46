import type { HandoffQueue } from "./handoff-queue.js";
import type { ClaimedRequest, Receipt, SharedCommits } from "./shared-commits.js";
import { timeLeft, type WriteJob } from "./write-job.js";
import type { WriteStats } from "./write-stats.js";

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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** What serving found: the requests claimed, and whether the transaction was lost meanwhile. */
export interface Serving {
  readonly claimed: readonly ClaimedRequest[];
  readonly lost: boolean;
}

const NOTHING_SERVED: Serving = Object.freeze({ claimed: Object.freeze([]), lost: false });

/**
 * The write queue's side of group commit across processes ({@link SharedCommits}, which owns the
 * files and the receipts table): posting the head of this process's queue for the lock holder to
 * commit, settling it from its receipt, and, while this process holds the lock, serving what
 * other processes posted. Each write still applies once, in call order per process. Everything
 * is a no-op when shared commits are off.
 */
export class PostedWrites {
  readonly #shared: SharedCommits | undefined;
  readonly #turns: HandoffQueue | undefined;
  readonly #stats: WriteStats;
  readonly #deadlineMs: number;
  /** When this store last met a writer of another process (see EAGER_POST_MS). */
  #contendedAt = Number.NEGATIVE_INFINITY;
  /** Set when a transaction was lost while serving other processes: the next attempt serves none. */
  #skipServing = false;

  constructor(
    shared: SharedCommits | undefined,
    turns: HandoffQueue | undefined,
    stats: WriteStats,
    deadlineMs: number,
  ) {
    this.#shared = shared;
    this.#turns = turns;
    this.#stats = stats;
    this.#deadlineMs = deadlineMs;
  }

  /** Whether writes of this process are posted and not yet settled. */
  get posted(): boolean {
    return this.#shared?.postedCount !== undefined;
  }

  /** Whether another process's writer was met lately: post before trying the lock. */
  get eager(): boolean {
    return this.#shared !== undefined && performance.now() - this.#contendedAt < EAGER_POST_MS;
  }

  /** A writer of another process was just met (a busy lock, a turn to wait for). */
  noteContention(): void {
    this.#contendedAt = performance.now();
  }

  /**
   * Posts the writes at the head of `pending` for the process holding the lock to commit, when
   * they can be shared (consecutive writes of one shareable kind) and none is posted yet.
   */
  post(pending: readonly WriteJob[]): void {
    const shared = this.#shared;
    if (shared === undefined || shared.postedCount !== undefined) return;
    const key = pending[0]?.merge?.key;
    if (key === undefined || !shared.handles(key)) return;
    const items: unknown[] = [];
    for (const job of pending) {
      if (items.length >= POST_LIMIT || job.kind !== "transaction" || job.merge?.key !== key) break;
      if (job.mergeFailed === true || job.noShare === true) break;
      items.push(job.merge.item);
    }
    if (items.length === 0) return;
    // A holder must not apply the request so late that the owner could be giving up: it gets
    // half of the time left, at most a second short of the deadline.
    const remaining = timeLeft(pending, this.#deadlineMs);
    shared.post(key, items, remaining - Math.min(1000, remaining / 2));
  }

  /** After a wait: settles the posted writes if another process has committed them; returns how many. */
  check(pending: WriteJob[]): number {
    const receipt = this.#shared?.check();
    if (receipt === undefined) return 0;
    this.#contendedAt = performance.now();
    if (receipt.applied) {
      // Served: this process leaves the queue as if it had committed, and the next waiter,
      // which may be the new head, gets its turn now rather than on its timer.
      this.#turns?.leave();
      this.#turns?.handOff();
    }
    return this.takeReceipt(pending, receipt);
  }

  /**
   * Settles the posted writes (the head of `pending`) from their receipt; returns how many. A
   * declined request (it failed there) is written by this process, which meets its own error.
   */
  takeReceipt(pending: WriteJob[], receipt: Receipt): number {
    if (!receipt.applied) {
      for (const job of pending.slice(0, receipt.count)) job.noShare = true;
      return 0;
    }
    const jobs = pending.splice(0, receipt.values.length);
    this.#stats.writes += jobs.length;
    if (this.#shared !== undefined) this.#shared.sharedWrites += jobs.length;
    for (let i = 0; i < jobs.length; i++) jobs[i]?.resolve(receipt.values[i]);
    return jobs.length;
  }

  /**
   * At the deadline of the head of the queue: takes the posted writes back. False when a holder
   * claimed them: they may be committed at this very moment, so "nothing was written" cannot be
   * said; their receipt, or this process holding the lock, settles them shortly (holders take
   * no request close to its deadline).
   */
  withdrawForExpiry(): boolean {
    const shared = this.#shared;
    return shared === undefined || shared.postedCount === undefined || shared.withdraw();
  }

  /**
   * Before refusing the queued writes (the file is damaged): withdraws the posted ones, or, if a
   * holder claimed them, waits up to CLAIM_GRACE_MS for its receipt (it commits within
   * milliseconds; one that does not has died, and then wrote nothing). Returns how many writes
   * a receipt settled.
   */
  async settleForRefusal(pending: WriteJob[]): Promise<number> {
    const shared = this.#shared;
    if (shared === undefined || shared.postedCount === undefined || shared.withdraw()) return 0;
    for (const started = performance.now(); performance.now() - started < CLAIM_GRACE_MS; ) {
      await sleep(1);
      const settled = this.check(pending);
      if (settled > 0) return settled;
      if (shared.postedCount === undefined) return 0;
    }
    shared.forget();
    return 0;
  }

  /**
   * Right after `BEGIN IMMEDIATE`: announces the lock, so that writers of other processes that
   * arrive now post their appends for this transaction; then, holding the lock, the receipts are
   * the whole truth about the writes this process posted. Returns their receipt, or `undefined`
   * when none is posted or none was committed (withdrawn: this process writes them itself).
   */
  takeLock(): Receipt | undefined {
    const shared = this.#shared;
    if (shared === undefined) return undefined;
    this.#turns?.hold();
    if (shared.postedCount === undefined) return undefined;
    const receipt = shared.settleInLock();
    return receipt === "withdrawn" ? undefined : receipt;
  }

  /**
   * Inside the lock, after this process's own writes: claims and applies the writes other
   * processes posted, one sync for all. `lost`: the transaction is gone; roll it back, then
   * pass `claimed` to {@link abandoned}.
   */
  serve(): Serving {
    const shared = this.#shared;
    if (shared === undefined) return NOTHING_SERVED;
    if (this.#skipServing) {
      this.#skipServing = false;
      return NOTHING_SERVED;
    }
    const serving = shared.serve(SERVE_LIMIT);
    if (serving.lost) this.#skipServing = true;
    return serving;
  }

  /** After `COMMIT`: the served writes are durable; their owners are woken. */
  committed(served: readonly ClaimedRequest[]): void {
    if (served.length === 0) return;
    this.#contendedAt = performance.now();
    this.#shared?.committed(served);
  }

  /** The transaction did not commit: the claims are void; their owners are woken to write them. */
  abandoned(served: readonly ClaimedRequest[]): void {
    this.#shared?.abandoned(served);
  }
}
