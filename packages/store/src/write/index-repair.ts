import type { DatabaseConnection } from "../database-connection.js";
import { isBusyError } from "../sqlite-errors.js";
import { rollbackQuietly } from "./rollback-quietly.js";
import type { WriteJob } from "./write-job.js";

/**
 * Repair of a derived index (the search index) that a write unit found damaged
 * (`SQLITE_CORRUPT_VTAB`): the index is rebuilt from the tables it mirrors, in a transaction of
 * its own, and the write is run again once.
 */
export interface IndexRepair {
  /** Whether a failure of the write unit named `label` may be repaired (not the index's own maintenance). */
  readonly appliesTo: (label: string) => boolean;
  /** Rebuilds the index; runs synchronously inside `BEGIN IMMEDIATE … COMMIT`. */
  readonly run: () => void;
}

/** Whether `job`, having met a damaged index, may have it repaired: once per job, where it applies. */
export function mayRepairIndex(repair: IndexRepair | undefined, job: WriteJob): boolean {
  return job.indexRepaired !== true && repair?.appliesTo(job.label) === true;
}

/** Rebuilds the damaged index in a transaction of its own. */
export function runIndexRepair(
  conn: DatabaseConnection,
  repair: IndexRepair | undefined,
): "repaired" | "busy" | { error: unknown } {
  if (repair === undefined) return { error: new Error("no index repair configured") };
  try {
    conn.statement("BEGIN IMMEDIATE").run();
  } catch (error) {
    return isBusyError(error) ? "busy" : { error };
  }
  try {
    repair.run();
    conn.statement("COMMIT").run();
    return "repaired";
  } catch (error) {
    rollbackQuietly(conn);
    return isBusyError(error) ? "busy" : { error };
  }
}
