// What changed in an agent's file since a cursor: the types of change capture (`changesSince`
// of `@hermes/store`), which a mirror applies to its copy.
import type { MessageViewState } from "../read-model/message-view-fields.js";
import type { MessageRow, SessionRow } from "../types.js";

/**
 * Where a consumer stands in a file's history: an opaque string (JSON inside; store it as is,
 * beside the data it describes, and hand it back to resume). `null` means "nothing yet".
 */
export type ChangeCursor = string;

/**
 * A message as change capture carries it: the read model's row (v11 columns, then the view
 * fields the file has columns for: uids, `view_state`, `compressed_summary`) plus what the
 * agent's display read needs: `display_order` (files with the column) and `model_only` (files
 * with `display_metadata`: the row is replayed but never displayed).
 */
export type CapturedMessage = MessageRow & {
  display_order?: number | null;
  model_only?: boolean;
};

/** The state of a message that may change after it was written (visibility, display order). */
export interface CapturedMessageState {
  id: number;
  /** Absent on files without `messages.active`. */
  view_state?: MessageViewState;
  display_order?: number | null;
  model_only?: boolean;
}

/**
 * Every row a session now holds among those a consumer already has, with its current state:
 * update those listed, delete the session's other rows (except the batch's new `messages`).
 * Sent only for sessions whose existing rows changed (a rewind, a compaction, a deletion).
 */
export interface SessionMessageStates {
  session_id: string;
  rows: CapturedMessageState[];
}

/**
 * One step of change capture. Apply in order:
 * - `kind: "resync"`: the cursor cannot be followed (file replaced or restored, generation or
 *   table layout changed, ids went backwards, no cursor at all): drop everything held from this
 *   file; the batches that follow carry it all again as new rows;
 * - `deletedSessionIds`: delete those sessions and all their messages;
 * - `sessions`: upsert (whole rows, the read model's fields included);
 * - `messageStates`: per session, update the rows listed, delete the session's others;
 * - `messages`: insert (new rows, in id order).
 * Then store `cursor` with the result, in the same transaction.
 */
export interface ChangeBatch {
  kind: "changes" | "resync";
  /** Why a `resync` (one sentence); `null` for `changes`. */
  reason: string | null;
  sessions: SessionRow[];
  deletedSessionIds: string[];
  messageStates: SessionMessageStates[];
  messages: CapturedMessage[];
  /** The cursor after this batch. */
  cursor: ChangeCursor;
  /** `true` when this batch brings the consumer up to the file's state at the time it was read. */
  caughtUp: boolean;
}

/** Options of `changesSince`. */
export interface ChangesSinceOptions {
  /**
   * Keep following the file after catching up: poll every `intervalMs` and yield a batch
   * whenever something changed, until `signal` aborts. Default `false`: yield batches until
   * caught up (at least one), then end.
   */
  follow?: boolean;
  /** Time between two polls while following, in ms (default 1000, at least 10). */
  intervalMs?: number;
  /** Ends the iteration (without an error) at the next poll. */
  signal?: AbortSignal;
  /** About how many message rows one batch reads (default 5000; one session is never split). */
  batchSize?: number;
  /**
   * While following: the least time between two full passes, in ms (default 0: every poll that
   * sees a commit is one). In between, a poll reads only the sessions with new messages (a rowid
   * range: cheap however many sessions the file has), exactly, in batches that are not
   * `caughtUp`; a session changed without a new message (a title, a flag, an end, a delete) is
   * reported by the next full pass, at most this long after.
   */
  sessionScanIntervalMs?: number;
  /** How long a poll waits for a writer's lock on a rollback-journal file, in ms (default 1000). */
  busyTimeoutMs?: number;
}
