import type { MessageRow } from "./types.js";

/** Options of `SessionStore.watchChanges`. */
export interface WatchChangesOptions {
  /** Stops the feed: the iteration ends (without an error) at the next tick. */
  signal?: AbortSignal;
  /** Time between two checks, in ms (default 250, at least 10). */
  intervalMs?: number;
  /**
   * Start after this message id (a cursor: the `lastMessageId` of an earlier change). Default:
   * the highest id at the first check, so only what is written from then on is reported.
   */
  afterMessageId?: number;
  /** Report only this session's messages (new sessions are then not reported). */
  sessionId?: string;
  /** Put the new messages themselves in each change (`messages`), at most `batchSize` per change. */
  includeMessages?: boolean;
  /** With `includeMessages`, the most messages one change carries (default 500, max 10,000). */
  batchSize?: number;
}

/** What changed in the database since the previous change of a `watchChanges` feed. */
export interface StoreChange {
  /** Sessions created since the previous change, oldest first (not reported with `sessionId`). */
  newSessionIds: string[];
  /** Sessions that received messages since the previous change (new ones included), by first new message. */
  updatedSessionIds: string[];
  /** The previous cursor: messages with an id above it, up to `lastMessageId`, are new. */
  afterMessageId: number;
  /** The highest message id reported so far: the cursor to resume from (`afterMessageId`). */
  lastMessageId: number;
  /** With `includeMessages`: the new messages in id (append) order, `tool_calls` parsed. */
  messages?: MessageRow[];
}
