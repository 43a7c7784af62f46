import type { DatabaseConnection } from "../database-connection.js";
import { isBusyError } from "../sqlite-errors.js";
import type { MergeableWrite } from "./mergeable-write.js";
import { rollbackQuietly } from "./rollback-quietly.js";
import type { WriteJob } from "./write-job.js";

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
