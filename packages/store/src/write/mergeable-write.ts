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
