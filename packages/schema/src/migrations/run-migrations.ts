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

/**
 * Brings a file to the chain's version, as the reference does on every open:
 * base steps (tables, column reconciliation), version steps for files below their version,
 * then finalize steps (title index, search tables).
 *
 * An up-to-date file is checked without taking the write lock. Otherwise every unit runs in
 * its own transaction and re-checks its precondition inside it, so a process killed at any
 * point leaves the file at its old version, and several processes opening the same old file
 * at once upgrade it exactly once (the others find the work done).
 */
export async function runMigrations(
  db: SqlExecutor,
  chain: MigrationChain,
  options: RunMigrationsOptions,
): Promise<MigrationReport> {
  const target = options.targetVersion ?? SCHEMA_VERSION;
  const applied: string[] = [];
  const warnings: string[] = [];
  const fromVersion = readSchemaVersion(db);

  if (fromVersion !== null && fromVersion > target) {
    return { fromVersion, toVersion: fromVersion, applied, warnings, newerVersion: true };
  }
  const behind = (v: number | null) => v === null || v < target;
  if (
    !behind(fromVersion) &&
    unsatisfied(db, chain.base).length === 0 &&
    unsatisfied(db, chain.finalize).length === 0
  ) {
    return { fromVersion, toVersion: fromVersion, applied, warnings, newerVersion: false };
  }

  const context = (from: number | null): MigrationContext => ({
    db,
    fromVersion: from,
    onProgress: options.onProgress,
    warn: (message) => warnings.push(message),
  });
  const runEnsure = (steps: readonly EnsureStep[], from: number | null) => {
    for (const step of unsatisfied(db, steps)) {
      step.up(context(from));
      applied.push(step.name);
    }
  };

  let newer = false;
  // Unit 1: tables and columns; a file without a version row is fresh and is created whole
  // here (stamped with the target, search tables created empty, as the reference does).
  await options.transaction("migrate:base", () => {
    const current = readSchemaVersion(db);
    if (current !== null && current > target) {
      newer = true;
      return;
    }
    runEnsure(chain.base, current);
    if (current === null) {
      db.run("INSERT INTO schema_version (version) VALUES (?)", [target]);
      applied.push(`stamp-v${target}`);
      runEnsure(chain.finalize, current);
    }
  });
  if (newer) {
    return { fromVersion, toVersion: readSchemaVersion(db), applied, warnings, newerVersion: true };
  }

  // Units 2…n: one transaction per version step, recording the version it reaches.
  for (const step of chain.versions) {
    if (step.version > target) break;
    // Cheap pre-check without the lock; the transaction checks again.
    const seen = readSchemaVersion(db);
    if (seen === null || seen >= step.version) continue;
    await options.transaction(`migrate:${step.name}`, () => {
      const current = readSchemaVersion(db);
      if (current === null || current >= step.version) return;
      step.up(context(current));
      db.run("UPDATE schema_version SET version = ?", [step.version]);
      applied.push(step.name);
    });
  }
  const afterSteps = readSchemaVersion(db);
  if (afterSteps !== null && afterSteps < target) {
    await options.transaction("migrate:version", () => {
      const current = readSchemaVersion(db);
      if (current !== null && current < target) {
        db.run("UPDATE schema_version SET version = ?", [target]);
        applied.push(`stamp-v${target}`);
      }
    });
  }

  // Last unit: indexes and virtual tables that must exist.
  if (unsatisfied(db, chain.finalize).length > 0) {
    await options.transaction("migrate:finalize", () => runEnsure(chain.finalize, fromVersion));
  }
  return {
    fromVersion,
    toVersion: readSchemaVersion(db),
    applied,
    warnings,
    newerVersion: false,
  };
}
