/**
 * Spreads a derived index's merge work evenly over the transactions that write several rows,
 * instead of leaving all of it to the one transaction in many that crosses the index's own
 * threshold (see search-merge-pacing.ts). Both run inside the write transaction.
 */
export interface MergePacing {
  /** Right after `BEGIN IMMEDIATE`: suspends the index's own merging for this transaction. */
  readonly hold: () => void;
  /**
   * Just before `COMMIT`: a bounded share of merge work, then the setting as it was. Throws when
   * the setting could not be restored; the transaction must then not commit.
   */
  readonly release: () => void;
}
