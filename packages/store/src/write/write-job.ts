import type { MergeableWrite } from "./mergeable-write.js";

/** One queued write: a transaction body, or an exclusive unit that runs outside any transaction. */
export interface WriteJob {
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

/** What became of one job of a group. */
export type JobOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Time left, in ms, before the deadline of the oldest write in `pending` (0 when it is empty). */
export function timeLeft(pending: readonly WriteJob[], deadlineMs: number): number {
  const oldest = pending[0];
  return oldest === undefined ? 0 : oldest.enqueuedAt + deadlineMs - performance.now();
}
