import { SCHEMA_VERSION } from "../core-ddl.js";
import type { SqlExecutor } from "../sql-executor.js";
import { readSchemaVersion } from "./introspect.js";
import type { EnsureStep, MigrationChain, MigrationContext, MigrationProgress } from "./migration.js";

/**
 * Runs `fn` as one write transaction (`BEGIN IMMEDIATE … COMMIT`, rolled back if it throws).
 * `@hermes/store` supplies it, with its lock waiting and retries; `fn` is synchronous.
 */
export type TransactionRunner = <T>(label: string, fn: () => T) => Promise<T>;

export interface RunMigrationsOptions {
  /** Executes each unit of the chain in its own write transaction. */
  readonly transaction: TransactionRunner;
  /** Progress of long steps (backfills), called synchronously. */
  readonly onProgress?: ((progress: MigrationProgress) => void) | undefined;
  /** The version a fresh file is stamped with (default `SCHEMA_VERSION`). */
  readonly targetVersion?: number;
}

/** What one open did to the file. */
export interface MigrationReport {
  /** Version found before the open; `null` for a fresh file. */
  readonly fromVersion: number | null;
  /** Version recorded after the open. */
  readonly toVersion: number | null;
  /** Names of the steps this process applied, in order (empty: nothing to do). */
  readonly applied: readonly string[];
  /** Problems that did not stop the open (duplicate titles, columns that could not be added). */
  readonly warnings: readonly string[];
  /** The file records a version above ours and was left untouched. */
  readonly newerVersion: boolean;
}

function unsatisfied(db: SqlExecutor, steps: readonly EnsureStep[]): EnsureStep[] {
  return steps.filter((s) => !s.isSatisfied(db));
}

/** What one transaction attempt did; merged into the report only once it commits. */
interface UnitResult {
  readonly applied: string[];
  readonly warnings: string[];
  newer: boolean;
}

/**
 * Brings a file to the chain's version, as the reference does on every open:
 * base steps (tables, column reconciliation), version steps for files below their version,
 * then finalize steps (title index, search tables).
 *
 * An up-to-date file is checked without taking the write lock. Otherwise the whole upgrade
 * is ONE write transaction (as in the reference, whose `_init_schema` commits once), and every
 * step re-checks its precondition inside it. So a process killed at any point, even deep in a
 * backfill of a million messages, leaves the file exactly as it was (its old version, its old
 * objects), and the next open does the whole upgrade; and several processes opening the same
 * old file at once upgrade it exactly once: the first takes the lock, the others wait for it
 * and then find nothing left to do.
 */
export async function runMigrations(
  db: SqlExecutor,
  chain: MigrationChain,
  options: RunMigrationsOptions,
): Promise<MigrationReport> {
  const target = options.targetVersion ?? SCHEMA_VERSION;
  const fromVersion = readSchemaVersion(db);

  if (fromVersion !== null && fromVersion > target) {
    return { fromVersion, toVersion: fromVersion, applied: [], warnings: [], newerVersion: true };
  }
  const behind = (v: number | null) => v === null || v < target;
  if (
    !behind(fromVersion) &&
    unsatisfied(db, chain.base).length === 0 &&
    unsatisfied(db, chain.finalize).length === 0
  ) {
    return { fromVersion, toVersion: fromVersion, applied: [], warnings: [], newerVersion: false };
  }

  const unit = await options.transaction("migrate", (): UnitResult => {
    // Fresh arrays per attempt: a busy retry re-runs this function from the start.
    const result: UnitResult = { applied: [], warnings: [], newer: false };
    const current = readSchemaVersion(db);
    if (current !== null && current > target) {
      result.newer = true;
      return result;
    }
    const context: MigrationContext = {
      db,
      fromVersion: current,
      onProgress: options.onProgress,
      warn: (message) => result.warnings.push(message),
    };
    const runEnsure = (steps: readonly EnsureStep[]) => {
      // Checked one by one, just before each runs: an earlier step (the core tables) can
      // satisfy a later one's precondition. A step counts as applied only if it now holds,
      // so a step that could not do its work (duplicate titles) is reported by its warning.
      for (const step of steps) {
        if (step.isSatisfied(db)) continue;
        step.up(context);
        if (step.isSatisfied(db)) result.applied.push(step.name);
      }
    };

    runEnsure(chain.base);
    if (current === null) {
      // A file without a version row is fresh: stamped with the target and given empty search
      // tables; no data step runs (the reference does the same).
      db.run("INSERT INTO schema_version (version) VALUES (?)", [target]);
      result.applied.push(`stamp-v${target}`);
    } else if (current < target) {
      for (const step of chain.versions) {
        if (step.version > target) break;
        if (current >= step.version) continue;
        step.up(context);
        result.applied.push(step.name);
      }
      db.run("UPDATE schema_version SET version = ?", [target]);
      result.applied.push(`stamp-v${target}`);
    }
    runEnsure(chain.finalize);
    return result;
  });

  return {
    fromVersion,
    toVersion: readSchemaVersion(db),
    applied: unit.applied,
    warnings: unit.warnings,
    newerVersion: unit.newer,
  };
}
