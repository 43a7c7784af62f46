import {
  type ConversationWindow,
  type ConversationWindowOptions,
  conversationWindowArguments,
  WindowPicker,
} from "@hermes/core";
import { replayedMessage } from "../operations/agent-visibility.js";
import type { PgStoreContext } from "../pg-store-context.js";

/** The last messages of a session, bounded by count and tokens. */
export async function getConversationWindow(
  ctx: PgStoreContext,
  sessionId: string,
  o?: ConversationWindowOptions,
): Promise<ConversationWindow> {
  const { id, lastMessages, maxTokens } = conversationWindowArguments(sessionId, o);
  return ctx.snapshot(async (db) => {
    const total =
      (
        await db
          .selectFrom("messages")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("session_id", "=", id)
          .where(replayedMessage())
          .executeTakeFirst()
      )?.n ?? 0;
    const picker = new WindowPicker(lastMessages, maxTokens);
    while (picker.wanted > 0) {
      picker.take(
        await db
          .selectFrom("messages")
          .select([
            "id",
            "timestamp",
            "role",
            "content",
            "tool_call_id",
            "tool_calls",
            "tool_name",
            "token_count",
            "reasoning",
            "reasoning_content",
            "reasoning_details",
            "codex_reasoning_items",
            "codex_message_items",
          ])
          .where("session_id", "=", id)
          .where(replayedMessage())
          .where((eb) => eb(eb.refTuple("timestamp", "id"), "<", eb.tuple(picker.beforeT, picker.beforeId)))
          .orderBy("timestamp", "desc")
          .orderBy("id", "desc")
          .limit(picker.wanted)
          .execute(),
      );
    }
    return picker.result(total);
  });
}
