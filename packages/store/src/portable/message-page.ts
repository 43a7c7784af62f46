import {
  InvalidArgumentError,
  type MessagePage,
  type MessagePageOptions,
  messagePageArguments,
  pageAround,
  toMessageRow,
} from "@hermes/core";
import type { MessageRow as StoredMessageRow } from "@hermes/schema";
import { readSnapshot } from "../read-snapshot.js";
import type { StoreContext } from "../store-context.js";
import { MESSAGE_COLUMN_SQL } from "./column-sql.js";

const FORWARD_SQL = `SELECT ${MESSAGE_COLUMN_SQL} FROM messages
  WHERE session_id = :session_id AND timestamp >= :t AND (timestamp > :t OR id > :id)
  ORDER BY timestamp, id LIMIT :limit`;
const BACKWARD_SQL = `SELECT ${MESSAGE_COLUMN_SQL} FROM messages
  WHERE session_id = :session_id AND timestamp <= :t AND (timestamp < :t OR id < :id)
  ORDER BY timestamp DESC, id DESC LIMIT :limit`;
const COUNT_BEFORE_SQL = `SELECT COUNT(*) AS n FROM messages
  WHERE session_id = :session_id AND timestamp <= :t AND (timestamp < :t OR id < :id)`;
const COUNT_AFTER_SQL = `SELECT COUNT(*) AS n FROM messages
  WHERE session_id = :session_id AND timestamp >= :t AND (timestamp > :t OR id > :id)`;
const CURSOR_SQL = "SELECT timestamp FROM messages WHERE id = ? AND session_id = ?";

/**
 * A page of a session's messages for a reader that moves through a long conversation (keyset
 * reads along idx_messages_session: a page of a 20,000-message session costs what a page of a
 * short one costs), with the number of messages before and after it. Read from one snapshot.
 */
export function getMessagePage(ctx: StoreContext, sessionId: string, o?: MessagePageOptions): MessagePage {
  const { id, limit, anchor } = messagePageArguments(sessionId, o);
  const displaySql = ctx.reads?.displayPageSql ? ctx.reads.displayMessagesSql : null;
  if (displaySql !== null) {
    // A newer agent's file orders display by its own key: the page is cut from the displayed
    // rows in that order (what getMessages returns), not by (timestamp, id).
    return readSnapshot(ctx, () =>
      pageOfDisplayed(ctx.conn.all<StoredMessageRow>(displaySql, [{ session_id: id }]), id, limit, anchor),
    );
  }
  return readSnapshot(ctx, () => {
    const forward = (t: number, after: number, n: number) =>
      ctx.conn.all<StoredMessageRow>(FORWARD_SQL, [{ session_id: id, t, id: after, limit: n }]);
    const backward = (t: number, before: number, n: number) =>
      ctx.conn.all<StoredMessageRow>(BACKWARD_SQL, [{ session_id: id, t, id: before, limit: n }]).reverse();
    let rows: StoredMessageRow[];
    if (!("messageId" in anchor)) {
      rows =
        anchor.kind === "start"
          ? forward(Number.NEGATIVE_INFINITY, 0, limit)
          : backward(Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER, limit);
    } else {
      const cursor = ctx.conn.get<{ timestamp: number }>(CURSOR_SQL, [anchor.messageId, id]);
      if (cursor === undefined) {
        throw new InvalidArgumentError(
          "messageId",
          `message ${anchor.messageId} is not a message of session ${id}`,
        );
      }
      const t = cursor.timestamp;
      const m = anchor.messageId;
      if (anchor.kind === "after") rows = forward(t, m, limit);
      else if (anchor.kind === "before") rows = backward(t, m, limit);
      else {
        // The message itself and what follows, after the few before it; a page near the end of
        // the conversation is filled up with earlier messages.
        const later = forward(t, m - 1, limit - pageAround(limit));
        const earlier = backward(t, m, limit - later.length);
        const end = later[later.length - 1];
        // Near the start, the page is filled up with later messages.
        const more =
          end !== undefined && earlier.length + later.length < limit
            ? forward(end.timestamp, end.id, limit - earlier.length - later.length)
            : [];
        rows = [...earlier, ...later, ...more];
      }
    }
    const count = (sql: string, t: number, at: number) =>
      ctx.conn.get<{ n: number }>(sql, [{ session_id: id, t, id: at }])?.n ?? 0;
    const first = rows[0];
    const last = rows[rows.length - 1];
    if (first === undefined || last === undefined) {
      // An empty page: at the end going forward, at the start going backward, or no messages.
      const total = count(COUNT_AFTER_SQL, Number.NEGATIVE_INFINITY, 0);
      const forwardEnd = anchor.kind === "after";
      return { messages: [], before: forwardEnd ? total : 0, after: forwardEnd ? 0 : total };
    }
    return {
      messages: rows.map(toMessageRow),
      before: count(COUNT_BEFORE_SQL, first.timestamp, first.id),
      after: count(COUNT_AFTER_SQL, last.timestamp, last.id),
    };
  });
}

/** The page of `anchor` cut from every displayed row of the session, in display order. */
function pageOfDisplayed(
  all: StoredMessageRow[],
  sessionId: string,
  limit: number,
  anchor: ReturnType<typeof messagePageArguments>["anchor"],
): MessagePage {
  const n = all.length;
  let start: number;
  let end: number;
  if (!("messageId" in anchor)) {
    start = anchor.kind === "start" ? 0 : Math.max(0, n - limit);
    end = anchor.kind === "start" ? Math.min(n, limit) : n;
  } else {
    const i = all.findIndex((m) => m.id === anchor.messageId);
    if (i < 0) {
      throw new InvalidArgumentError(
        "messageId",
        `message ${anchor.messageId} is not a message of session ${sessionId}`,
      );
    }
    if (anchor.kind === "after") [start, end] = [i + 1, Math.min(n, i + 1 + limit)];
    else if (anchor.kind === "before") [start, end] = [Math.max(0, i - limit), i];
    else {
      // As on a v11 file: the message and what follows after a few before it, filled up at either end.
      start = Math.max(0, i + Math.min(n - i, limit - pageAround(limit)) - limit);
      end = Math.min(n, start + limit);
    }
  }
  return { messages: all.slice(start, end).map(toMessageRow), before: start, after: n - end };
}
