import { type Figures, summarizeLatencies, timeRatio } from "./latency-summary.js";
import type { CaseResult } from "./scenario.js";
import { describeFailure } from "./store-capability.js";

/** One side of a comparison: called once per operation with the operation's index. */
export type Operation = (index: number) => unknown;

/** How many operations to measure, and how. */
export interface AlternatingPlan {
  /** Unrecorded operations of each side before measuring (caches, JIT, statement cache). */
  warmup: number;
  /** Recorded operations of each side. */
  iterations: number;
  /** Blocks per side; sides take turns block by block, starting side alternating. */
  rounds: number;
  /** Stop after the current round once this much time (ms) has been measured in total. */
  budgetMs?: number;
}

/** Latencies of both sides, and the error that stopped ours if any. */
export interface AlternatingSamples {
  store: number[];
  baseline: number[];
  storeError: unknown;
}

/**
 * Measures our operation and the baseline's in the same run, taking turns in blocks (store
 * first in even rounds, baseline first in odd ones) so drift on a shared machine (other load,
 * file growth, page cache) falls on both sides alike. Each operation is timed on its own.
 *
 * If our side throws (a method not written yet), the baseline is still measured alone.
 */
export async function measureAlternating(
  store: Operation,
  baseline: Operation,
  plan: AlternatingPlan,
): Promise<AlternatingSamples> {
  const out: AlternatingSamples = { store: [], baseline: [], storeError: undefined };
  let index = 0;
  let storeOk = true;
  for (let i = 0; i < plan.warmup; i++) {
    if (storeOk) {
      try {
        await store(index);
      } catch (error) {
        storeOk = false;
        out.storeError = error;
      }
    }
    await baseline(index);
    index++;
  }
  const perRound = Math.max(1, Math.ceil(plan.iterations / Math.max(1, plan.rounds)));
  let measured = 0;
  let spent = 0;
  for (let round = 0; measured < plan.iterations; round++) {
    const block = Math.min(perRound, plan.iterations - measured);
    const sides: Array<"store" | "baseline"> =
      round % 2 === 0 ? ["store", "baseline"] : ["baseline", "store"];
    for (const side of sides) {
      if (side === "store" && !storeOk) continue;
      const fn = side === "store" ? store : baseline;
      const samples = out[side];
      for (let i = 0; i < block; i++) {
        const t0 = performance.now();
        try {
          await fn(index + i);
        } catch (error) {
          if (side === "baseline") throw error;
          storeOk = false;
          out.storeError = error;
          break;
        }
        const dt = performance.now() - t0;
        samples.push(dt);
        spent += dt;
      }
    }
    index += block;
    measured += block;
    if (plan.budgetMs !== undefined && spent > plan.budgetMs) break;
  }
  return out;
}

/** A table row from alternating samples. */
export function caseFromSamples(
  name: string,
  method: string,
  samples: AlternatingSamples,
  extra?: CaseResult["extra"],
): CaseResult {
  const baseline = summarizeLatencies(samples.baseline);
  let store: Figures | null = samples.store.length > 0 ? summarizeLatencies(samples.store) : null;
  const result: CaseResult = { name, status: "ok", store, baseline, ratio: null, extra };
  if (samples.storeError !== undefined) {
    const failure = describeFailure(method, samples.storeError);
    result.status = failure.status;
    result.note = failure.note;
    store = null;
    result.store = null;
  }
  result.ratio = timeRatio(store, baseline);
  return result;
}
