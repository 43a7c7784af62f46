/** Latency and throughput of one measured operation. Times are milliseconds. */
export interface Figures {
  /** Operations measured (after warm-up). */
  n: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
  /** Operations per second: `n` over the time they took (wall time when given). */
  opsPerSec: number;
}

/** The value below which `q` (0…1) of the sorted samples lie (nearest rank). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/**
 * Summarizes per-operation latencies. `wallMs` is the elapsed time of the whole run when the
 * operations overlapped (concurrent callers); otherwise throughput is derived from their sum.
 */
export function summarizeLatencies(samplesMs: readonly number[], wallMs?: number): Figures {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  const elapsed = wallMs ?? sum;
  return {
    n: sorted.length,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: sorted.length > 0 ? sorted[sorted.length - 1]! : Number.NaN,
    meanMs: sorted.length > 0 ? sum / sorted.length : Number.NaN,
    opsPerSec: elapsed > 0 ? (sorted.length / elapsed) * 1000 : Number.NaN,
  };
}

/**
 * Our time over the baseline's time for the same work (mean per operation): 1.00 is parity,
 * 1.15 means 15 % slower than raw SQLite, 0.40 means 2.5× faster.
 */
export function timeRatio(store: Figures | null, baseline: Figures | null): number | null {
  if (store === null || baseline === null) return null;
  if (!(store.opsPerSec > 0) || !(baseline.opsPerSec > 0)) return null;
  return baseline.opsPerSec / store.opsPerSec;
}
