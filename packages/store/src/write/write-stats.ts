import type { HandoffQueue } from "./handoff-queue.js";
import type { SharedCommits } from "./shared-commits.js";

/** Counters of the write path, readable through `store.stats()`. */
export interface WriteStats {
  /**
   * Write units committed (each `appendMessage`, `appendMessages`, … call counts once), whoever
   * committed them (this store, or another process for it: `sharedWrites`).
   */
  writes: number;
  /** Write units that failed on their own (unknown session, title conflict, …) or with `STORE_BUSY`. */
  failedWrites: number;
  /** Transactions committed; each holds one group of writes. */
  groupsCommitted: number;
  /**
   * Mean number of this store's writes per transaction it committed
   * (`(writes - sharedWrites) / groupsCommitted`; other processes' writes it committed are
   * `servedWrites`).
   */
  writesPerGroupMean: number;
  /** Largest number of this store's writes committed in one of its transactions. */
  writesPerGroupMax: number;
  /** `BEGIN IMMEDIATE` attempts, successful or not (one per group attempt). */
  attempts: number;
  /** Attempts repeated after a busy/locked error. */
  retries: number;
  /** Busy/locked errors met. */
  busyErrors: number;
  /** Total time spent waiting for the lock between attempts, in ms. */
  waitedMs: number;
  /** Writes that gave up with `STORE_BUSY`. */
  busyTimeouts: number;
  /** Checkpoints run (periodic PASSIVE, escalations and at close). */
  checkpoints: number;
  /** RESTART checkpoints run because the WAL grew past `walRestartBytes`. */
  walRestarts: number;
  /** Checkpoints escalated to TRUNCATE because the WAL outgrew `walMaxBytes`. */
  walEscalations: number;
  /** Largest WAL size seen at a checkpoint, in bytes. */
  walBytesMax: number;
  /**
   * Times a commit handed the lock to the oldest waiting writer of another process (the
   * cross-process queue; 0 when it is off).
   */
  handoffs: number;
  /** Times a write queued behind an older waiting writer of another process instead of racing it. */
  deferrals: number;
  /**
   * Writes of this process that another process committed in its transaction while this one
   * waited for the lock (group commit across processes; 0 when it is off).
   */
  sharedWrites: number;
  /** Writes of other processes that this process committed in its own transactions. */
  servedWrites: number;
}

/**
 * Fresh counters. The write queue and its parts (lock waits, WAL checkpoints, posted writes)
 * share this one object and each counts its own events in it.
 */
export function createWriteStats(): WriteStats {
  return {
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
}

/**
 * A snapshot of `counters`, with the figures the cross-process queue (`turns`) and shared
 * commits (`shared`) keep themselves, and the mean group size derived.
 */
export function writeStatsSnapshot(
  counters: WriteStats,
  turns: HandoffQueue | undefined,
  shared: SharedCommits | undefined,
): WriteStats {
  const s = counters;
  return {
    ...s,
    // This store's own writes per transaction it committed (not those another process
    // committed for it, which are in `writes` but in none of its transactions).
    writesPerGroupMean:
      s.groupsCommitted === 0 ? 0 : (s.writes - (shared?.sharedWrites ?? 0)) / s.groupsCommitted,
    handoffs: turns?.handoffs ?? 0,
    deferrals: turns?.deferrals ?? 0,
    sharedWrites: shared?.sharedWrites ?? 0,
    servedWrites: shared?.servedWrites ?? 0,
  };
}
