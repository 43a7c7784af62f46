// The shape of `verifySearchIndex()` and `rebuildSearchIndex()` progress, whatever the backend's
// index (SQLite's FTS5 tables, PostgreSQL's tsvector and trigram indexes).

/** Progress of a long index operation. */
export interface SearchIndexProgress {
  /** The index being worked on (SQLite: `messages_fts`, `messages_fts_trigram`, `hermes_search_cjk`). */
  readonly index: string;
  readonly done: number;
  readonly total: number;
}

/** State of one search index. */
export interface SearchIndexStatus {
  /** Table name. */
  readonly name: string;
  /** `unicode61` (words), `trigram` (substrings of 3+ characters), `short-cjk` (one- and two-character CJK terms). */
  readonly kind: "unicode61" | "trigram" | "short-cjk";
  /**
   * `ok`; `missing` (a reference table or trigger is gone: searches miss rows);
   * `damaged` (an integrity check failed, or the index disagrees with `messages`);
   * `behind` (short-CJK: changes queued, applied before its next use);
   * `building` (short-CJK: backfill interrupted, resumed before its next use);
   * `not-built` (short-CJK: created on first need, nothing to check).
   */
  readonly status: "ok" | "missing" | "damaged" | "behind" | "building" | "not-built";
  /** What is wrong, in words. */
  readonly detail?: string;
  /** Short-CJK: queued changes not yet applied. */
  readonly pending?: number;
}

/** What `verifySearchIndex()` found. */
export interface SearchIndexReport {
  /** No index is `missing` or `damaged`. */
  readonly ok: boolean;
  readonly indexes: SearchIndexStatus[];
}
