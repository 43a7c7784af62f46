import {
  type ConversationMessage,
  InvalidArgumentError,
  isReplayedUserPrompt,
  MAX_LINEAGE_HOPS,
  optionsObject,
  REPLAY_COLUMNS,
  requireId,
  toConversationMessage,
} from "@hermes/core";
import { anyText, type PgDb } from "../pg-database.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { replayedMessage } from "./agent-visibility.js";

/** The `includeAncestors` option of a conversation read (a boolean, default `false`). */
export function includeAncestorsOption(o: { includeAncestors?: boolean } | undefined): boolean {
  const includeAncestors = optionsObject("options", o).includeAncestors;
  if (includeAncestors !== undefined && typeof includeAncestors !== "boolean") {
    throw new InvalidArgumentError("includeAncestors", "includeAncestors must be a boolean");
  }
  return includeAncestors === true;
}

/**
 * A session's messages in the OpenAI chat shape; with `includeAncestors`, those of its parent
 * chain too (at most `MAX_LINEAGE_HOPS`), replayed user prompts dropped.
 */
export async function conversationOf(
  db: PgDb,
  id: string,
  includeAncestors: boolean,
): Promise<ConversationMessage[]> {
  let chain = [id];
  if (includeAncestors) {
    chain = [];
    const seen = new Set<string>();
    let current: string | null = id;
    for (let hop = 0; hop < MAX_LINEAGE_HOPS; hop++) {
      if (current === null || current === "" || seen.has(current)) break;
      seen.add(current);
      chain.push(current);
      const row: { parent_session_id: string | null } | undefined = await db
        .selectFrom("sessions")
        .select("parent_session_id")
        .where("id", "=", current)
        .executeTakeFirst();
      if (row === undefined) break;
      current = row.parent_session_id;
    }
  }
  const rows = await db
    .selectFrom("messages")
    .select(REPLAY_COLUMNS)
    .$if(includeAncestors, (qb) => qb.where("session_id", "=", anyText(chain)))
    .$if(!includeAncestors, (qb) => qb.where("session_id", "=", id))
    .where(replayedMessage())
    .orderBy("timestamp")
    .orderBy("id")
    .execute();
  const messages: ConversationMessage[] = [];
  for (const row of rows) {
    const msg = toConversationMessage(row);
    if (includeAncestors && isReplayedUserPrompt(messages, msg)) continue;
    messages.push(msg);
  }
  return messages;
}

/** The conversation in the OpenAI chat shape, optionally with its ancestors. */
export async function getMessagesAsConversation(
  ctx: PgStoreContext,
  sessionId: string,
  o?: { includeAncestors?: boolean },
): Promise<ConversationMessage[]> {
  const id = requireId("sessionId", sessionId);
  const includeAncestors = includeAncestorsOption(o);
  return ctx.snapshot((db) => conversationOf(db, id, includeAncestors));
}
