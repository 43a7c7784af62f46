import { StoreBusyError } from "@hermes/core";
import type { HandoffQueue } from "./handoff-queue.js";
import type { PostedWrites } from "./posted-writes.js";
import { timeLeft, type WriteJob } from "./write-job.js";
import type { WritePolicy } from "./write-policy.js";
import type { WriteStats } from "./write-stats.js";

/**
 * Longest wait, in ms, of a write queued behind an older waiter of another process before it
 * looks at the queue again (it is normally woken before): the safety net for a lost wake-up.
 */
const QUEUED_WAIT_MS = 5;

/**
 * Longest wait, in ms, of a write whose appends are posted, before it looks again (the holder
 * that commits them wakes it; the timer is the safety net).
 */
const POSTED_WAIT_MS = 20;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * How the head of the write queue waits while another connection holds the lock: a jittered,
 * growing backoff on timers (SQLite's own busy handler would block the event loop), turns in
 * the cross-process queue ({@link HandoffQueue}) when there is one, and each write's deadline,
 * past which it fails with `STORE_BUSY` with nothing written. Each wait ends by settling the
 * posted writes if another process committed them meanwhile; the methods return how many.
 */
export class LockWait {
  readonly #policy: WritePolicy;
  readonly #turns: HandoffQueue | undefined;
  readonly #posted: PostedWrites;
  readonly #stats: WriteStats;
  /** The next backoff, in ms, of the group at the head of the queue. */
  #backoff: number;

  constructor(policy: WritePolicy, turns: HandoffQueue | undefined, posted: PostedWrites, stats: WriteStats) {
    this.#policy = policy;
    this.#turns = turns;
    this.#posted = posted;
    this.#stats = stats;
    this.#backoff = policy.backoffMinMs;
  }

  /** Before a new group's first attempt: the backoff starts over. */
  reset(): void {
    this.#backoff = this.#policy.backoffMinMs;
  }

  /**
   * A writer of another process has waited longer: queue behind it rather than race it for the
   * lock; it wakes this one when its turn comes (the timer is a safety net).
   */
  async deferToOlder(pending: WriteJob[]): Promise<number> {
    const turns = this.#turns;
    if (turns === undefined) return 0;
    turns.enqueue();
    turns.deferrals++;
    this.#posted.noteContention();
    this.expire(pending, undefined);
    if (pending.length === 0) return 0;
    this.#posted.post(pending);
    // Look again now that this store is in the queue: a holder that released the lock
    // between the first look and the enqueue did not see this store to wake it.
    if (turns.turn() !== "queue") return 0;
    const before = performance.now();
    await turns.wait(
      Math.min(this.#waitInQueue(true, QUEUED_WAIT_MS), timeLeft(pending, this.#policy.deadlineMs)),
    );
    this.#stats.waitedMs += performance.now() - before;
    return this.#posted.check(pending);
  }

  /** The attempt met a busy lock: expire what is past its deadline, then wait for the next attempt. */
  async afterBusy(pending: WriteJob[], error: unknown): Promise<number> {
    this.#stats.busyErrors++;
    this.#posted.noteContention();
    this.expire(pending, error);
    if (pending.length === 0) return 0;
    const remaining = timeLeft(pending, this.#policy.deadlineMs);
    const backoff = this.#backoff;
    // Full jitter: spread competing processes so they do not wake in lockstep.
    const delay = Math.max(0, Math.min(remaining, backoff / 2 + Math.random() * (backoff / 2)));
    this.#backoff = Math.min(backoff * 2, this.#policy.backoffMaxMs);
    this.#stats.retries++;
    const before = performance.now();
    const turns = this.#turns;
    if (turns === undefined) await sleep(delay);
    else {
      // In the queue: the head polls on the backoff (the holder may be a process that
      // hands nothing off); the others wait for their wake-up.
      turns.enqueue();
      this.#posted.post(pending);
      await turns.wait(Math.min(this.#waitInQueue(turns.turn() === "queue", delay), remaining));
    }
    this.#stats.waitedMs += performance.now() - before;
    return this.#posted.check(pending);
  }

  /** The repair of a damaged index met a busy lock: wait like any busy attempt, then re-run. */
  async afterBusyRepair(pending: WriteJob[], error: unknown): Promise<void> {
    this.#stats.busyErrors++;
    this.expire(pending, error);
    if (pending.length === 0) return;
    this.#stats.retries++;
    await sleep(this.#backoff);
    this.#backoff = Math.min(this.#backoff * 2, this.#policy.backoffMaxMs);
  }

  /** Rejects, with `STORE_BUSY`, the queued writes whose deadline has passed (a FIFO prefix). */
  expire(pending: WriteJob[], cause: unknown): void {
    const now = performance.now();
    const deadlineMs = this.#policy.deadlineMs;
    const head = pending[0];
    if (head !== undefined && now - head.enqueuedAt >= deadlineMs && !this.#posted.withdrawForExpiry()) {
      return; // claimed by a holder: its receipt settles them (see withdrawForExpiry)
    }
    let n = 0;
    for (const job of pending) {
      if (now - job.enqueuedAt < deadlineMs) break;
      n++;
    }
    for (const job of pending.splice(0, n)) {
      this.#stats.busyTimeouts++;
      this.#stats.failedWrites++;
      job.reject(new StoreBusyError(Math.max(1, job.attempts), now - job.enqueuedAt, { cause }));
    }
  }

  /**
   * How long a write in the queue sleeps unless woken. Posted writes are committed by whoever
   * takes the lock next (the head, or a store holding it now), which wakes their owner: the
   * timer is only a safety net. Otherwise a write behind the head waits to be woken, and the
   * head polls on its backoff (`headDelay`: the holder may be a process that hands nothing off).
   */
  #waitInQueue(behindHead: boolean, headDelay: number): number {
    if (this.#posted.posted && (behindHead || this.#turns?.holderSeen === true)) return POSTED_WAIT_MS;
    return behindHead ? QUEUED_WAIT_MS : headDelay;
  }
}
