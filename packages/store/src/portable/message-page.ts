import type { MessageRow as StoredMessageRow } from "@hermes/schema";
import { InvalidArgumentError } from "../errors.js";
import { toMessageRow } from "../operations/messages.js";
import { readSnapshot } from "../read-snapshot.js";
import type { StoreContext } from "../store-context.js";
import type { MessageRow } from "../types.js";
import { nonNegativeInt, options, requireId } from "../validate.js";
import { MESSAGE_COLUMN_SQL } from "./jsonl-format.js";

/** Options of `getMessagePage`: at most one of `afterId`, `beforeId`, `aroundId`. */
export interface MessagePageOptions {
  /** The messages right after this message of the session. */
  afterId?: number;
  /** The messages right before this message of the session. */
  beforeId?: number;
  /** A page holding this message, with about a quarter of the page before it. */
  aroundId?: number;
  /** Without a message id: the first page (`start`, default) or the last one (`end`). */
  from?: "start" | "end";
  /** Messages per page: 1–1,000, default 100. */
  limit?: number;
}

/** One page of a session's messages in conversation order (`timestamp`, then `id`). */
export interface MessagePage {
  /** The rows of `getMessages` (`tool_calls` parsed). */
  messages: MessageRow[];
  /** Messages of the session before the first one of this page. */
  before: number;
  /** Messages of the session after the last one of this page. */
  after: number;
}

/** Where a page starts, as validated by {@link messagePageArguments}. */
export type MessagePageAnchor =
  | { kind: "start" | "end" }
  | { kind: "after" | "before" | "around"; messageId: number };

/** The validated arguments of `getMessagePage` (shared with other backends). */
export interface MessagePageArguments {
  id: string;
  limit: number;
  anchor: MessagePageAnchor;
}

const MAX_PAGE = 1000;

/** Checks the arguments of `getMessagePage` (shared with other backends). */
export function messagePageArguments(
  sessionId: unknown,
  o: MessagePageOptions | undefined,
): MessagePageArguments {
  const id = requireId("sessionId", sessionId);
  const opts = options("options", o);
  const limit = nonNegativeInt("limit", opts.limit, 100, MAX_PAGE);
  if (limit === 0) throw new InvalidArgumentError("limit", "limit must be at least 1");
  const given = (["afterId", "beforeId", "aroundId"] as const).filter((k) => opts[k] !== undefined);
  if (given.length > 1) {
    throw new InvalidArgumentError(given[1]!, `give at most one of afterId, beforeId and aroundId`);
  }
  const key = given[0];
  if (key !== undefined) {
    const messageId = opts[key];
    if (typeof messageId !== "number" || !Number.isSafeInteger(messageId)) {
      throw new InvalidArgumentError(key, `${key} must be an integer message id`);
    }
    if (opts.from !== undefined) throw new InvalidArgumentError("from", `from does not go with ${key}`);
    const kind = key === "afterId" ? "after" : key === "beforeId" ? "before" : "around";
    return { id, limit, anchor: { kind, messageId } };
  }
  const from = opts.from ?? "start";
  if (from !== "start" && from !== "end")
    throw new InvalidArgumentError("from", "from must be 'start' or 'end'");
  return { id, limit, anchor: { kind: from } };
}

/** Messages a page around a message shows before it (the rest is the message and what follows). */
export function pageAround(limit: number): number {
  return Math.floor(limit / 4);
}

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
