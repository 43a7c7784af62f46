/**
 * Counters of a store's write path (`store.stats()`), one shape per backend, told apart by
 * `backend` (the same value as `store.backend.kind`). Every shape has the {@link WriteCounters}.
 *
 * @example
 * const s = store.stats();
 * console.log(s.writes, s.retries);
 * if (s.backend === "sqlite") console.log(`WAL ${s.walBytes} bytes`);
 */
export type StoreStats = SqliteStoreStats | PostgresStoreStats | CustomStoreStats;

/** What every backend counts of its writes, since the store was opened. */
export interface WriteCounters {
  /**
   * Write units committed (each `appendMessage`, `appendMessages`, … call counts once), whoever
   * committed them.
   */
  writes: number;
  /** Write units that failed on their own (unknown session, title conflict, …) or with `STORE_BUSY`. */
  failedWrites: number;
  /** Transactions committed; each holds one group of writes. */
  groupsCommitted: number;
  /** Mean number of this store's writes per transaction it committed. */
  writesPerGroupMean: number;
  /** Largest number of this store's writes committed in one of its transactions. */
  writesPerGroupMax: number;
  /** Transaction attempts, successful or not (one per group attempt). */
  attempts: number;
  /**
   * Attempts repeated after a conflict another connection caused (SQLite: busy/locked;
   * PostgreSQL: serialization failure or deadlock).
   */
  retries: number;
  /** Such conflicts met. */
  busyErrors: number;
  /** Total time spent waiting between attempts, in ms. */
  waitedMs: number;
  /** Writes that gave up with `STORE_BUSY`. */
  busyTimeouts: number;
}

/** `@hermes/store`: the write counters, and those of SQLite's WAL and of the writers' queue. */
export interface SqliteStoreStats extends WriteCounters {
  readonly backend: "sqlite";
  /**
   * Mean number of this store's writes per transaction it committed
   * (`(writes - sharedWrites) / groupsCommitted`; other processes' writes it committed are
   * `servedWrites`).
   */
  writesPerGroupMean: number;
  /** Checkpoints started (periodic PASSIVE, escalations and at close); the SQLite store hands them to its checkpoint thread. */
  checkpoints: number;
  /** RESTART checkpoints run because the WAL grew past `walRestartBytes`. */
  walRestarts: number;
  /** Checkpoints escalated to TRUNCATE because the WAL outgrew `walMaxBytes`. */
  walEscalations: number;
  /** Largest WAL size seen at a checkpoint, in bytes. */
  walBytesMax: number;
  /**
   * Times a commit handed the lock to the oldest waiting writer of another process (the
   * cross-process queue; 0 when it is off).
   */
  handoffs: number;
  /** Times a write queued behind an older waiting writer of another process instead of racing it. */
  deferrals: number;
  /**
   * Writes of this process that another process committed in its transaction while this one
   * waited for the lock (group commit across processes; 0 when it is off). They count in `writes`.
   */
  sharedWrites: number;
  /** Writes of other processes that this process committed in its own transactions. */
  servedWrites: number;
  /** Current size of the `-wal` file, in bytes. */
  walBytes: number;
  /** The store's own indexes beside the reference's (see {@link SideIndexStatus}). */
  readonly sideIndexes: { readonly cjk: SideIndexStatus };
}

/**
 * How far one of the store's own side indexes is built. `cjk` is the index of one- and
 * two-character CJK terms, which a writable store adds to a file the first time such a term
 * is searched (or at open with `cjkIndex: "eager"`), building it on a worker thread; until it
 * is `ready`, searches read it around its queue of changes (once its backfill is complete) or
 * scan, with the same hits.
 *
 * @example
 * const { cjk } = store.stats().sideIndexes;
 * if (cjk.state === "building") console.log(`${cjk.indexedRows} of ${cjk.totalRows} messages`);
 */
export interface SideIndexStatus {
  /**
   * `absent`: not in the file. `building`: created but not complete (a build runs, or one was
   * interrupted and resumes on the next search of a writable store). `ready`: complete; changes
   * written since (`pendingChanges`) are applied before the next search that needs them.
   */
  readonly state: "absent" | "building" | "ready";
  /** Whether this store is building it now, on a worker thread (never for a read-only store). */
  readonly active: boolean;
  /**
   * Messages indexed so far, and messages to index, counted by message id (ids are assigned in
   * order, so a gap left by a deleted message still counts). Equal when `ready`.
   */
  readonly indexedRows: number;
  readonly totalRows: number;
  /** Changes to messages (inserts, updates, deletes) queued for the index, not applied yet. */
  readonly pendingChanges: number;
  /** Why the last build of this store stopped early (its committed work is kept), else `null`. */
  readonly lastError: string | null;
}

/** `@hermes/postgres`: the write counters (the server commits concurrent transactions itself). */
export interface PostgresStoreStats extends WriteCounters {
  readonly backend: "postgres";
}

/** A third party's backend: the write counters, plus figures of its own in `details`. */
export interface CustomStoreStats extends WriteCounters {
  readonly backend: "custom";
  readonly details?: Readonly<Record<string, number>>;
}
