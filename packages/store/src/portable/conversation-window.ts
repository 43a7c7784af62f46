import {
  type ConversationWindow,
  type ConversationWindowOptions,
  conversationWindowArguments,
  WindowPicker,
  type WindowRow,
} from "@hermes/core";
import { readSnapshot } from "../read-snapshot.js";
import type { StoreContext } from "../store-context.js";

// Newest first along idx_messages_session (scanned backwards): a window over the last messages
// of a million-message session reads those messages only.
const TAIL_SQL = `SELECT id, timestamp, role, content, tool_call_id, tool_calls, tool_name, token_count, reasoning,
    reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items
  FROM messages
  WHERE session_id = :session_id AND timestamp <= :before_t AND (timestamp < :before_t OR id < :before_id)
  ORDER BY timestamp DESC, id DESC LIMIT :limit`;
const COUNT_SQL = "SELECT COUNT(*) AS n FROM messages WHERE session_id = ?";

/**
 * The last messages of a session, bounded by count and/or tokens, read backwards from the end
 * (never the whole session), in the shape of `getMessagesAsConversation`. Leading tool results
 * whose call fell outside the window are dropped, so the window can be sent to a model as is.
 * An unknown session gives an empty window.
 */
export function getConversationWindow(
  ctx: StoreContext,
  sessionId: string,
  o?: ConversationWindowOptions,
): ConversationWindow {
  const { id, lastMessages, maxTokens } = conversationWindowArguments(sessionId, o);
  return readSnapshot(ctx, () => {
    const total = ctx.conn.get<{ n: number }>(COUNT_SQL, [id])?.n ?? 0;
    const picker = new WindowPicker(lastMessages, maxTokens);
    while (picker.wanted > 0) {
      picker.take(
        ctx.conn.all<WindowRow>(TAIL_SQL, [
          { session_id: id, before_t: picker.beforeT, before_id: picker.beforeId, limit: picker.wanted },
        ]),
      );
    }
    return picker.result(total);
  });
}
