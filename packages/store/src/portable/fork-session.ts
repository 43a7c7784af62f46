import {
  type ForkSessionOptions,
  forkArguments,
  InvalidArgumentError,
  newSessionId,
  SessionNotFoundError,
  type SessionRow,
  TitleConflictError,
} from "@hermes/core";
import { getNextTitleInLineage } from "../operations/titles.js";
import type { StoreContext } from "../store-context.js";
import { pauseFtsAutomerge } from "../write/pause-fts-automerge.js";
import { SESSION_COLUMN_SQL } from "./column-sql.js";

// The fork is written by SQLite itself: one INSERT … SELECT per table, so no message passes
// through JavaScript, however long the session. Messages keep their timestamps (the fork is
// the same conversation up to that point); they get new ids, and the FTS triggers index them.
// `_branched_from` in model_config is the reference's own marker of a /branch child (later
// upstream versions list such children as branches), so the link reads as a branch even though
// the parent is not ended.
const INSERT_FORK_SQL = `INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt,
    parent_session_id, started_at, title, billing_provider, billing_base_url, billing_mode)
  SELECT :new_id, source, user_id, model,
    CASE WHEN json_valid(model_config) AND json_type(model_config) = 'object'
      THEN json_set(model_config, '$._branched_from', :parent_id)
      ELSE json_object('_branched_from', :parent_id) END,
    system_prompt, id, :now, :title, billing_provider, billing_base_url, billing_mode
  FROM sessions WHERE id = :parent_id`;

const COPY_MESSAGES_SQL = `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name,
    timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details,
    codex_reasoning_items, codex_message_items)
  SELECT :new_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason,
    reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items
  FROM messages
  WHERE session_id = :parent_id AND timestamp <= :at_t AND (timestamp < :at_t OR id <= :at_id)
  ORDER BY timestamp, id`;

// Counters as appendMessage would have left them: every row counts as a message; a row with
// tool calls adds the length of its list, or 1 for anything else (an object, text that is not JSON).
const SET_COUNTERS_SQL = `UPDATE sessions SET
    message_count = (SELECT COUNT(*) FROM messages WHERE session_id = :new_id),
    tool_call_count = (SELECT COALESCE(SUM(CASE
        WHEN tool_calls IS NULL THEN 0
        WHEN json_valid(tool_calls) AND json_type(tool_calls) = 'array' THEN json_array_length(tool_calls)
        ELSE 1 END), 0) FROM messages WHERE session_id = :new_id)
  WHERE id = :new_id`;

const SESSION_SQL = `SELECT ${SESSION_COLUMN_SQL} FROM sessions WHERE id = ?`;
const MESSAGE_AT_SQL = "SELECT timestamp FROM messages WHERE id = ? AND session_id = ?";
const TITLE_HOLDER_SQL = "SELECT id FROM sessions WHERE title = ? LIMIT 1";

/**
 * Forks a session: a new session, child of `id`, holding a copy of its messages up to
 * `atMessageId`, with `message_count`/`tool_call_count` set to what was copied, token and cost
 * counters at zero, and a lineage title. All in one write unit. Returns the new session's row.
 * Throws `SESSION_NOT_FOUND` for an unknown session, `INVALID_ARGUMENT` for a message of another
 * session or a `newId` already in use, `TITLE_CONFLICT` for an explicit title already in use.
 */
export async function forkSession(
  ctx: StoreContext,
  id: string,
  o?: ForkSessionOptions,
): Promise<SessionRow> {
  const { parentId, at, requestedId, explicitTitle } = forkArguments(id, o);

  return ctx.writes.run("forkSession", () => {
    const conn = ctx.conn;
    const parent = conn.get<SessionRow>(SESSION_SQL, [parentId]);
    if (parent === undefined)
      throw new SessionNotFoundError(parentId, `forkSession: session ${parentId} does not exist`);
    let atT = Number.POSITIVE_INFINITY;
    let atId = Number.MAX_SAFE_INTEGER;
    if (at !== undefined) {
      const row = conn.get<{ timestamp: number }>(MESSAGE_AT_SQL, [at, parentId]);
      if (row === undefined) {
        throw new InvalidArgumentError(
          "atMessageId",
          `message ${at} is not a message of session ${parentId}`,
        );
      }
      atT = row.timestamp;
      atId = at;
    }
    const now = ctx.now();
    const newId = requestedId ?? newSessionId(now);
    if (conn.get(SESSION_SQL, [newId]) !== undefined) {
      throw new InvalidArgumentError("newId", `a session with id ${newId} already exists`);
    }
    let title: string | null;
    if (explicitTitle !== undefined) {
      title = explicitTitle;
      const holder = title === null ? undefined : conn.get<{ id: string }>(TITLE_HOLDER_SQL, [title]);
      if (holder !== undefined && title !== null) throw new TitleConflictError(title, holder.id);
    } else {
      // Inside the write unit, so no other writer can take the same number meanwhile.
      title = parent.title === null ? null : getNextTitleInLineage(ctx, parent.title);
    }
    conn.run(INSERT_FORK_SQL, [{ new_id: newId, parent_id: parentId, now, title }]);
    // Both FTS tables index every copied row through their triggers; their incremental merging
    // is paused for the copy (see pauseFtsAutomerge) and put back in the same transaction.
    const { resume: resumeMerging } = pauseFtsAutomerge(conn);
    let copied = false;
    try {
      conn.run(COPY_MESSAGES_SQL, [{ new_id: newId, parent_id: parentId, at_t: atT, at_id: atId }]);
      copied = true;
    } finally {
      if (copied) resumeMerging();
      else {
        try {
          resumeMerging();
        } catch {
          // The copy's own error is the one to report; the write unit rolls back the setting
          // with everything else, and FTS5 rereads it (its structure cookie rolls back too).
        }
      }
    }
    conn.run(SET_COUNTERS_SQL, [{ new_id: newId }]);
    return conn.get<SessionRow>(SESSION_SQL, [newId]) as SessionRow;
  });
}
