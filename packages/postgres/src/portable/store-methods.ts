import { type AnthropicConversation, requireId, sessionToMarkdown, toAnthropicMessages } from "@hermes/core";
import { conversationOf, includeAncestorsOption } from "../operations/conversation.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { exportStream } from "./export-stream.js";

export { getConversationWindow } from "./conversation-window.js";
export { exportJsonl } from "./export-jsonl.js";
export { exportStream } from "./export-stream.js";
export { forkSession } from "./fork-session.js";
export { importSessions } from "./import-sessions.js";
export { iterMessages } from "./iter-messages.js";
export { getLineage } from "./lineage.js";
export { getMessagePage } from "./message-page.js";
export { listSessionPage } from "./session-page.js";
export { usageStats } from "./usage-stats.js";

/** The conversation in the Anthropic Messages shape. */
export async function getMessagesAsAnthropic(
  ctx: PgStoreContext,
  sessionId: string,
  o?: { includeAncestors?: boolean },
): Promise<AnthropicConversation> {
  const id = requireId("sessionId", sessionId);
  const includeAncestors = includeAncestorsOption(o);
  return ctx.snapshot(async (db) => {
    const row = await db
      .selectFrom("sessions")
      .select("system_prompt")
      .where("id", "=", id)
      .executeTakeFirst();
    return toAnthropicMessages(await conversationOf(db, id, includeAncestors), row?.system_prompt ?? null);
  });
}

/** A Markdown rendering of a session, or `null` for an unknown session. */
export async function exportSessionMarkdown(ctx: PgStoreContext, id: string): Promise<string | null> {
  const sid = requireId("id", id);
  for await (const s of exportStream(ctx, { sessionIds: [sid] })) return sessionToMarkdown(s);
  return null;
}
