/** How writes wait for the lock held by another connection, and how they are grouped. */
export interface WritePolicy {
  /** Total patience of one write, in ms, from the call; past it the write fails with `STORE_BUSY`. */
  readonly deadlineMs: number;
  /** First backoff between attempts, in ms (jittered). */
  readonly backoffMinMs: number;
  /** Largest backoff between attempts, in ms. */
  readonly backoffMaxMs: number;
  /**
   * PASSIVE checkpoint after this many committed transactions that wrote (the reference uses 50;
   * there each write is one transaction). A group commit counts once.
   */
  readonly checkpointEvery: number;
  /** Most writes committed together in one transaction (group commit); 1 disables grouping. */
  readonly maxGroupSize: number;
  /**
   * WAL size, in bytes, above which the queue escalates from PASSIVE to TRUNCATE checkpoints and,
   * if readers keep old snapshots, briefly holds this process's writes back so they can let go.
   */
  readonly walMaxBytes: number;
  /**
   * WAL size, in bytes, past which a commit that grows the WAL file is followed by a RESTART
   * checkpoint (it waits only the busy timeout). Several processes writing back to back never
   * leave the quiet moment SQLite needs to reset the WAL after PASSIVE checkpoints; RESTART
   * makes one.
   */
  readonly walRestartBytes: number;
  /** Longest time, in ms, writes are held back while escalating a checkpoint, per escalation. */
  readonly walPauseBudgetMs: number;
}

export const DEFAULT_WRITE_POLICY: WritePolicy = {
  deadlineMs: 30_000,
  backoffMinMs: 1,
  backoffMaxMs: 4,
  checkpointEvery: 50,
  maxGroupSize: 64,
  walMaxBytes: 32 * 1024 * 1024,
  walRestartBytes: 4 * 1024 * 1024,
  walPauseBudgetMs: 250,
};
