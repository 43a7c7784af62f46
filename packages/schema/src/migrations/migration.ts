import type { SqlExecutor } from "../sql-executor.js";

/** Progress of a long step (a backfill), reported as rows done out of rows to do. */
export interface MigrationProgress {
  /** Name of the step, e.g. `v11-fts-reindex`. */
  readonly step: string;
  readonly done: number;
  readonly total: number;
}

/** What a step receives while it runs inside its transaction. */
export interface MigrationContext {
  readonly db: SqlExecutor;
  /** Version recorded before this open began, `null` for a file without a version row. */
  readonly fromVersion: number | null;
  /** Called synchronously during long steps. */
  readonly onProgress?: ((progress: MigrationProgress) => void) | undefined;
  /** Records a problem that does not stop the open (e.g. duplicate titles). */
  warn(message: string): void;
}

/**
 * A step that must hold on every open (tables, columns, indexes that may be missing).
 * Idempotent: `isSatisfied` is checked outside any transaction to skip the write lock on
 * an up-to-date file, and again inside the transaction before `up` runs.
 */
export interface EnsureStep {
  readonly name: string;
  isSatisfied(db: SqlExecutor): boolean;
  up(ctx: MigrationContext): void;
}

/**
 * A data step that brings a file to `version`. It runs once, when the recorded version is
 * below `version`, in a transaction that also records the new version.
 */
export interface VersionStep {
  readonly version: number;
  readonly name: string;
  up(ctx: MigrationContext): void;
}

/** The steps one package contributes to the chain (see `composeChain`). */
export interface SchemaContribution {
  /** Run first: tables and columns. */
  readonly base?: readonly EnsureStep[];
  /** Version steps, run in ascending `version` order across all contributions. */
  readonly versions?: readonly VersionStep[];
  /** Run after the version steps: indexes and virtual tables that must exist. */
  readonly finalize?: readonly EnsureStep[];
}

/** An ordered migration chain. */
export interface MigrationChain {
  readonly base: readonly EnsureStep[];
  readonly versions: readonly VersionStep[];
  readonly finalize: readonly EnsureStep[];
}

/**
 * Composes the contributions of several packages into one chain, in the order given for
 * `base` and `finalize` steps and by version for version steps.
 *
 * @example
 * const chain = composeChain(coreSchema, searchSchema);
 */
export function composeChain(...contributions: readonly SchemaContribution[]): MigrationChain {
  const versions = contributions.flatMap((c) => c.versions ?? []);
  const seen = new Set<number>();
  for (const step of versions) {
    if (seen.has(step.version)) {
      throw new Error(`Two migration steps claim schema version ${step.version}`);
    }
    seen.add(step.version);
  }
  return {
    base: contributions.flatMap((c) => c.base ?? []),
    versions: [...versions].sort((a, b) => a.version - b.version),
    finalize: contributions.flatMap((c) => c.finalize ?? []),
  };
}
