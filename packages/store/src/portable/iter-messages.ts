import { setImmediate as nextTick } from "node:timers/promises";
import {
  InvalidArgumentError,
  type IterMessagesOptions,
  iterMessagesArguments,
  type MessageRow,
  toMessageRow,
} from "@hermes/core";
import type { MessageRow as StoredMessageRow } from "@hermes/schema";
import type { StoreContext } from "../store-context.js";
import { MESSAGE_COLUMN_SQL } from "./column-sql.js";

// Keyset pagination in conversation order (timestamp, id), along idx_messages_session: every
// page is an index range scan, so reading page 1,000 costs what page 1 costs.
const PAGE_SQL = `SELECT ${MESSAGE_COLUMN_SQL} FROM messages
  WHERE session_id = :session_id AND timestamp >= :after_t AND (timestamp > :after_t OR id > :after_id)
  ORDER BY timestamp, id LIMIT :limit`;
const CURSOR_SQL = "SELECT timestamp FROM messages WHERE id = ? AND session_id = ?";

/**
 * The messages of a session in conversation order (`timestamp`, then `id`, as `getMessages`),
 * read page by page: memory holds one page, and the event loop runs between pages. Rows are
 * those of `getMessages` (`tool_calls` parsed). Resume from a cursor with `afterId`.
 *
 * @example
 * let cursor: number | undefined
 * for await (const m of store.iterMessages(id, { limit: 50 })) cursor = m.id   // first page
 * for await (const m of store.iterMessages(id, { afterId: cursor, limit: 50 })) …  // next page
 */
export function iterMessages(
  ctx: StoreContext,
  sessionId: string,
  o?: IterMessagesOptions,
): AsyncIterable<MessageRow> {
  const { id, limit, pageSize, afterId } = iterMessagesArguments(sessionId, o);
  return (async function* () {
    let afterT = Number.NEGATIVE_INFINITY;
    let cursorId = 0;
    if (afterId !== undefined) {
      const row = ctx.conn.get<{ timestamp: number }>(CURSOR_SQL, [afterId, id]);
      if (row === undefined) {
        throw new InvalidArgumentError("afterId", `message ${afterId} is not a message of session ${id}`);
      }
      afterT = row.timestamp;
      cursorId = afterId;
    }
    let left = limit;
    while (left > 0) {
      const n = Math.min(pageSize, left);
      const page = ctx.conn.all<StoredMessageRow>(PAGE_SQL, [
        { session_id: id, after_t: afterT, after_id: cursorId, limit: n },
      ]);
      for (const row of page) yield toMessageRow(row);
      left -= page.length;
      if (page.length < n) return;
      const last = page[page.length - 1]!;
      afterT = last.timestamp;
      cursorId = last.id;
      await nextTick();
    }
  })();
}
