import type { SqliteStoreStats } from "@hermes/core";
import type { HandoffQueue } from "./handoff-queue.js";
import type { SharedCommits } from "./shared-commits.js";

/** Counters of the write path, readable through `store.stats()` (every field but the WAL size and the side indexes). */
export type WriteStats = Omit<SqliteStoreStats, "backend" | "walBytes" | "sideIndexes">;

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

/** Counters of the fields that hold a largest value, not a count. */
const MAXIMA: ReadonlySet<string> = new Set(["writesPerGroupMax", "walBytesMax"]);

/**
 * The counters of two successive write paths of one store as one (a writer thread that ended,
 * then its successor): counts added, largest values kept, the mean group size derived again.
 */
export function addWriteStats(a: WriteStats, b: WriteStats): WriteStats {
  const sum = { ...b };
  for (const key of Object.keys(sum) as Array<keyof WriteStats>) {
    sum[key] = MAXIMA.has(key) ? Math.max(a[key], b[key]) : a[key] + b[key];
  }
  sum.writesPerGroupMean =
    sum.groupsCommitted === 0 ? 0 : (sum.writes - sum.sharedWrites) / sum.groupsCommitted;
  return sum;
}
