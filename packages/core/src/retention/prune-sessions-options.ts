import { optionalBoolean, optionsObject } from "../validation/arguments.js";

/**
 * Options of `pruneSessions`. Pinned sessions are never pruned (the agent never prunes them);
 * sessions flagged archived (by the user or the agent's stale sweep) or hidden are left alone
 * unless `includeArchived` / `includeHidden`, as every listing leaves them out. A store without
 * such flags (a v11 file) has nothing to leave out.
 */
export interface PruneSessionsOptions {
  /** Age in days, by start time (default 90). */
  olderThanDays?: number;
  /** Only sessions of this source. */
  source?: string;
  /** The transcript folder: each pruned session's files are removed from it. */
  sessionsDir?: string;
  /** Also prune sessions flagged archived (never pinned ones). */
  includeArchived?: boolean;
  /** Also prune sessions flagged hidden (never pinned ones). */
  includeHidden?: boolean;
}

/** The checked `includeArchived` / `includeHidden` of `pruneSessions` (`INVALID_ARGUMENT`). */
export function pruneVisibilityArguments(o: PruneSessionsOptions | undefined): {
  includeArchived: boolean;
  includeHidden: boolean;
} {
  const opts = optionsObject("options", o);
  return {
    includeArchived: optionalBoolean("includeArchived", opts.includeArchived, false),
    includeHidden: optionalBoolean("includeHidden", opts.includeHidden, false),
  };
}
