import { type AnthropicConversation, requireId, sessionToMarkdown, toAnthropicMessages } from "@hermes/core";
import { getMessagesAsConversation } from "../operations/conversation.js";
import { exportSession } from "../operations/retention.js";
import { readSnapshot } from "../read-snapshot.js";
import type { StoreContext } from "../store-context.js";
import { exportStream } from "./export-stream.js";

export { getConversationWindow } from "./conversation-window.js";
export { exportJsonl } from "./export-jsonl.js";
export { exportEvents, exportStream } from "./export-stream.js";
export { forkSession } from "./fork-session.js";
export { importSessions, writeImportBatch } from "./import-sessions.js";
export { iterMessages } from "./iter-messages.js";
export { getLineage } from "./lineage.js";
export { getMessagePage } from "./message-page.js";
export { listSessionPage } from "./session-page.js";
export { usageStats } from "./usage-stats.js";

const SYSTEM_PROMPT_SQL = "SELECT system_prompt FROM sessions WHERE id = ?";

/**
 * The session's conversation in the Anthropic Messages shape: its system prompt apart, tool
 * calls and results as `tool_use`/`tool_result` blocks (see `toAnthropicMessages`). Built on
 * `getMessagesAsConversation`, so content is cleaned the same way. Unknown session: no messages.
 */
export function getMessagesAsAnthropic(
  ctx: StoreContext,
  sessionId: string,
  o?: { includeAncestors?: boolean },
): AnthropicConversation {
  const id = requireId("sessionId", sessionId);
  return readSnapshot(ctx, () => {
    const row = ctx.conn.get<{ system_prompt: string | null }>(SYSTEM_PROMPT_SQL, [id]);
    return toAnthropicMessages(getMessagesAsConversation(ctx, id, o), row?.system_prompt ?? null);
  });
}

/**
 * A Markdown rendering of one session (`sessionToMarkdown`), or `null` for an unknown session.
 * A newer agent's file renders what the agent displays (the export stream carries superseded
 * rows too).
 */
export async function exportSessionMarkdown(ctx: StoreContext, id: string): Promise<string | null> {
  const sessionId = requireId("id", id);
  if (ctx.reads) {
    const session = exportSession(ctx, sessionId);
    return session === null ? null : sessionToMarkdown(session);
  }
  for await (const s of exportStream(ctx, { sessionIds: [sessionId] })) return sessionToMarkdown(s);
  return null;
}
