import type { StoreContext } from "../store-context.js";
import type { ConversationMessage } from "../types.js";

export function getMessagesAsConversation(
  _ctx: StoreContext,
  _sessionId: string,
  _o?: { includeAncestors?: boolean },
): ConversationMessage[] {
  throw new Error("getMessagesAsConversation is not implemented yet");
}
