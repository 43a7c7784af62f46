import {
  type ConversationMessage,
  InvalidArgumentError,
  isReplayedUserPrompt,
  MAX_LINEAGE_HOPS,
  optionsObject,
  REPLAY_COLUMNS,
  type ReplayRow,
  requireId,
  toConversationMessage,
} from "@hermes/core";
import { sql } from "kysely";
import { compileQuery, param } from "../prepared-query.js";
import { readSnapshot } from "../read-snapshot.js";
import type { StoreContext } from "../store-context.js";

const sessionRowsQ = compileQuery<{ session_id: string }>((db) =>
  db
    .selectFrom("messages")
    .select(REPLAY_COLUMNS)
    .where("session_id", "=", param("session_id"))
    .orderBy("timestamp")
    .orderBy("id"),
);

// The lineage has a variable number of sessions; passing it as one JSON array keeps a single
// compiled, prepared statement for every chain length. The rows of all sessions interleave by
// (timestamp, id), exactly as the reference's `session_id IN (…) ORDER BY timestamp, id`.
const lineageRowsQ = compileQuery<{ session_ids: string }>((db) =>
  db
    .selectFrom("messages")
    .select(REPLAY_COLUMNS)
    .where("session_id", "in", sql<string>`(SELECT value FROM json_each(${param("session_ids")}))`)
    .orderBy("timestamp")
    .orderBy("id"),
);

const parentQ = compileQuery<{ id: string }>((db) =>
  db.selectFrom("sessions").select("parent_session_id").where("id", "=", param("id")),
);

/**
 * The session's lineage, root first: follows `parent_session_id` up to {@link MAX_LINEAGE_HOPS}
 * sessions, stopping at a missing session or at a cycle. Always contains `sessionId`.
 */
export function lineageRootToSession(ctx: StoreContext, sessionId: string): string[] {
  const chain: string[] = [];
  const seen = new Set<string>();
  let current: string | null = sessionId;
  for (let hop = 0; hop < MAX_LINEAGE_HOPS; hop++) {
    if (current === null || current === "" || seen.has(current)) break;
    seen.add(current);
    chain.push(current);
    const row: { parent_session_id: string | null } | undefined = ctx.conn.getOf(parentQ, { id: current });
    if (row === undefined) break;
    current = row.parent_session_id;
  }
  return chain.reverse();
}

/**
 * The session's messages in the OpenAI chat shape, ordered by (timestamp, id); with
 * `includeAncestors`, the messages of its whole parent chain, root first, with replayed
 * resume prompts removed. An unknown session gives `[]`.
 */
export function getMessagesAsConversation(
  ctx: StoreContext,
  sessionId: string,
  o?: { includeAncestors?: boolean },
): ConversationMessage[] {
  const id = requireId("sessionId", sessionId);
  const includeAncestors = optionsObject("options", o).includeAncestors;
  if (includeAncestors !== undefined && typeof includeAncestors !== "boolean") {
    throw new InvalidArgumentError("includeAncestors", "includeAncestors must be a boolean");
  }
  const rows: ReplayRow[] = includeAncestors
    ? readSnapshot(ctx, () =>
        ctx.conn.allOf(lineageRowsQ, { session_ids: JSON.stringify(lineageRootToSession(ctx, id)) }),
      )
    : ctx.conn.allOf(sessionRowsQ, { session_id: id });
  const messages: ConversationMessage[] = [];
  for (const row of rows) {
    const msg = toConversationMessage(row);
    if (includeAncestors && isReplayedUserPrompt(messages, msg)) continue;
    messages.push(msg);
  }
  return messages;
}
