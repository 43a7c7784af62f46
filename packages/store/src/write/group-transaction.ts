import { BackendError } from "@hermes/core";
import type { DatabaseConnection } from "../database-connection.js";
import { isBusyError, sqliteCode } from "../sqlite-errors.js";
import { applyMerged, mergeableRun } from "./apply-merged.js";
import { type IndexRepair, mayRepairIndex } from "./index-repair.js";
import type { MergePacing } from "./merge-pacing.js";
import type { PostedWrites } from "./posted-writes.js";
import { rollbackQuietly } from "./rollback-quietly.js";
import type { ClaimedRequest, Receipt } from "./shared-commits.js";
import type { JobOutcome, WriteJob } from "./write-job.js";

/** What one attempt at a group came to. */
export type GroupResult =
  | { kind: "committed"; outcomes: JobOutcome[] }
  | { kind: "busy"; error: unknown }
  /** The whole transaction failed (COMMIT error, or SQLite rolled everything back): no write kept. */
  | { kind: "failed"; outcomes: JobOutcome[] }
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

/**
 * One attempt at a group of writes on the writer connection: `BEGIN IMMEDIATE`, each job in its
 * own savepoint (runs of mergeable jobs in one), the writes other processes posted, `COMMIT`.
 * A job that fails rolls back alone; what SQLite rolls back whole, a busy lock and a damaged
 * search index are reported to the queue, which decides what runs again. Synchronous: no
 * `await` inside a transaction.
 */
export class GroupTransaction {
  readonly #conn: DatabaseConnection;
  readonly #posted: PostedWrites;
  readonly #indexRepair: IndexRepair | undefined;
  /** Merge pacing of the search index; dropped for good if it ever fails to restore its setting. */
  #pacing: MergePacing | undefined;

  constructor(
    conn: DatabaseConnection,
    posted: PostedWrites,
    indexRepair: IndexRepair | undefined,
    pacing: MergePacing | undefined,
  ) {
    this.#conn = conn;
    this.#posted = posted;
    this.#indexRepair = indexRepair;
    this.#pacing = pacing;
  }

  /** One attempt at a group: BEGIN IMMEDIATE, each job in a savepoint, COMMIT. */
  attempt(group: WriteJob[]): GroupResult {
    const conn = this.#conn;
    try {
      conn.statement("BEGIN IMMEDIATE").run();
    } catch (error) {
      if (isBusyError(error)) return { kind: "busy", error };
      return { kind: "failed", outcomes: group.map(() => ({ ok: false, error })) };
    }
    const posted = this.#posted;
    const receipt = posted.takeLock();
    if (receipt !== undefined) {
      rollbackQuietly(conn);
      return { kind: "receipt", receipt };
    }
    // A transaction that writes for several callers (here, or in other processes) spreads the
    // search index's merging instead of sometimes doing a large share of it at once.
    const pacing = group.length > 1 || posted.eager ? this.#pacing : undefined;
    if (pacing !== undefined) {
      try {
        pacing.hold();
      } catch (error) {
        return this.#pacingFailed(error, []);
      }
    }
    // A lone write needs no savepoint: rolling back the transaction is rolling back the write.
    const alone = group.length === 1;
    const outcomes: JobOutcome[] = [];
    // Jobs before this index whose merged statement failed run one by one (not merged again).
    let separateUntil = 0;
    for (let i = 0; i < group.length; i++) {
      const job = group[i] as WriteJob;
      const run = i < separateUntil ? 0 : mergeableRun(group, i);
      if (run > 1) {
        const merged = applyMerged(conn, group.slice(i, i + run));
        if (merged.kind === "applied") {
          for (const value of merged.values) outcomes.push({ ok: true, value });
          i += run - 1;
          continue;
        }
        if (merged.kind === "busy") {
          rollbackQuietly(conn);
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
          rollbackQuietly(conn);
          return { kind: "busy", error };
        }
        if (sqliteCode(error) === "SQLITE_CORRUPT_VTAB" && mayRepairIndex(this.#indexRepair, job)) {
          rollbackQuietly(conn);
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
          rollbackQuietly(conn);
          return { kind: "failed", outcomes: [{ ok: false, error }] };
        }
        try {
          conn.statement("ROLLBACK TO hermes_write").run();
          conn.statement("RELEASE hermes_write").run();
        } catch (rollbackError) {
          rollbackQuietly(conn);
          return { kind: "aborted", culprit: i, error: rollbackError };
        }
        outcomes.push({ ok: false, error });
      }
    }
    // Then the writes other processes posted while waiting for the lock: one sync for all.
    const serving = posted.serve();
    if (serving.lost) {
      rollbackQuietly(conn);
      posted.abandoned(serving.claimed);
      return { kind: "retry" };
    }
    const served = serving.claimed;
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
      posted.committed(served);
    } catch (error) {
      rollbackQuietly(conn);
      posted.abandoned(served);
      if (isBusyError(error)) return { kind: "busy", error };
      // FTS5 writes its pending index data at COMMIT: a damaged index may first show here.
      if (
        sqliteCode(error) === "SQLITE_CORRUPT_VTAB" &&
        group.every((job) => mayRepairIndex(this.#indexRepair, job))
      ) {
        return { kind: "index-damaged", culprit: null, error };
      }
      return { kind: "failed", outcomes: group.map(() => ({ ok: false, error })) };
    }
    return { kind: "committed", outcomes };
  }

  /** An exclusive job, outside any transaction (`VACUUM`). */
  attemptExclusive(job: WriteJob): GroupResult {
    try {
      const value = job.fn();
      return { kind: "committed", outcomes: [{ ok: true, value }] };
    } catch (error) {
      if (this.#conn.inTransaction) rollbackQuietly(this.#conn);
      if (isBusyError(error)) return { kind: "busy", error };
      return { kind: "failed", outcomes: [{ ok: false, error }] };
    }
  }

  /**
   * Merge pacing threw: the transaction is rolled back, and the group re-runs (after a backoff if
   * the lock was busy). Pacing never fails a write: after any other error it is dropped for good.
   */
  #pacingFailed(error: unknown, served: readonly ClaimedRequest[]): GroupResult {
    rollbackQuietly(this.#conn);
    this.#posted.abandoned(served);
    if (isBusyError(error)) return { kind: "busy", error };
    this.#pacing = undefined;
    return { kind: "retry" };
  }
}

function isThenable(value: unknown): boolean {
  return (
    typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"
  );
}
