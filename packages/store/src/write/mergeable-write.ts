import type { DatabaseConnection } from "../database-connection.js";
import { isBusyError } from "../sqlite-errors.js";
import { rollbackQuietly } from "./rollback-quietly.js";
import type { WriteJob } from "./write-job.js";

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

/** What became of a merged statement: see {@link applyMerged}. */
export type MergedResult =
  | { kind: "applied"; values: readonly unknown[] }
  | { kind: "separately" }
  | { kind: "busy"; error: unknown }
  | { kind: "lost" };

/** How many jobs of `group` from `start` on can be applied as one merged write (0 or 1: none). */
export function mergeableRun(group: readonly WriteJob[], start: number): number {
  const key = group[start]?.merge?.key;
  if (key === undefined || group[start]?.mergeFailed === true) return 0;
  let n = 1;
  while (start + n < group.length) {
    const next = group[start + n] as WriteJob;
    if (next.merge?.key !== key || next.mergeFailed === true) break;
    n++;
  }
  return n;
}

/**
 * Applies consecutive mergeable jobs through their `many`, inside a savepoint of the open
 * transaction: `applied` with one value per job; `separately` when it threw and was rolled back
 * (the transaction goes on); `busy`; or `lost` when SQLite rolled back the whole transaction.
 */
export function applyMerged(conn: DatabaseConnection, jobs: readonly WriteJob[]): MergedResult {
  const merge = (jobs[0] as WriteJob).merge as MergeableWrite<unknown>;
  try {
    conn.statement("SAVEPOINT hermes_merged").run();
    const values = merge.many(jobs.map((job) => job.merge?.item));
    if (values.length !== jobs.length) {
      throw new Error(`merged write '${merge.key}' gave ${values.length} results for ${jobs.length} writes`);
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
      rollbackQuietly(conn);
      return { kind: "lost" };
    }
    return { kind: "separately" };
  }
}
