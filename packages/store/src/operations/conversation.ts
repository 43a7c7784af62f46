import { sql } from "kysely";
import { InvalidArgumentError } from "../errors.js";
import { parsePythonJson } from "../parse-python-json.js";
import { compileQuery, param } from "../prepared-query.js";
import { readSnapshot } from "../read-snapshot.js";
import { sanitizeContext, stripPythonWhitespace } from "../sanitize-context.js";
import type { StoreContext } from "../store-context.js";
import type { ConversationMessage } from "../types.js";
import { options, requireId } from "../validate.js";

/** Longest parent chain followed by `includeAncestors` (as the reference). */
export const MAX_LINEAGE_HOPS = 100;

/** The columns a conversation replay reads (`finish_reason`, ids and timestamps are not replayed). */
interface ReplayRow {
  role: string;
  content: string | null;
  tool_call_id: string | null;
  tool_calls: string | null;
  tool_name: string | null;
  reasoning: string | null;
  reasoning_content: string | null;
  reasoning_details: string | null;
  codex_reasoning_items: string | null;
  codex_message_items: string | null;
}

/** The columns a conversation replay reads (shared with other backends). */
export const REPLAY_COLUMNS = [
  "role",
  "content",
  "tool_call_id",
  "tool_calls",
  "tool_name",
  "reasoning",
  "reasoning_content",
  "reasoning_details",
  "codex_reasoning_items",
  "codex_message_items",
] as const;

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

/** Python truthiness of a decoded JSON value (`[]`, `{}`, `""`, `0`, `false`, `null` are falsy). */
export function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === "") return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

/** Parses stored JSON text; `fallback` when it does not parse (one bad row never breaks a replay). */
export function parseOr(text: string, fallback: unknown): unknown {
  try {
    return parsePythonJson(text);
  } catch {
    return fallback;
  }
}

/** One stored row in the OpenAI chat shape, keys present only where the reference sets them (also used by `getConversationWindow`). */
export function toConversationMessage(row: ReplayRow): ConversationMessage {
  let content = row.content;
  if ((row.role === "user" || row.role === "assistant") && typeof content === "string") {
    content = stripPythonWhitespace(sanitizeContext(content));
  }
  const msg: ConversationMessage = { role: row.role, content };
  // Optional keys only when the stored value is truthy: absent, never `undefined`.
  if (row.tool_call_id) msg.tool_call_id = row.tool_call_id;
  if (row.tool_name) msg.tool_name = row.tool_name;
  if (row.tool_calls) msg.tool_calls = parseOr(row.tool_calls, []);
  // Providers that replay reasoning (OpenRouter, OpenAI, Nous) need it back on assistant turns
  // only. `reasoning_content` is kept even when empty: an empty string is a provider's signal.
  if (row.role === "assistant") {
    if (row.reasoning) msg.reasoning = row.reasoning;
    if (row.reasoning_content !== null) msg.reasoning_content = row.reasoning_content;
    if (row.reasoning_details) msg.reasoning_details = parseOr(row.reasoning_details, null);
    if (row.codex_reasoning_items) msg.codex_reasoning_items = parseOr(row.codex_reasoning_items, null);
    if (row.codex_message_items) msg.codex_message_items = parseOr(row.codex_message_items, null);
  }
  return msg;
}

/**
 * A resumed session replays its parent's last user prompt; when ancestors are joined, that
 * prompt would appear twice. A user message is a replay when the same text was sent earlier
 * with no assistant answer (content or tool calls) in between.
 */
export function isReplayedUserPrompt(
  previous: readonly ConversationMessage[],
  msg: ConversationMessage,
): boolean {
  if (msg.role !== "user" || typeof msg.content !== "string" || msg.content === "") return false;
  for (let i = previous.length - 1; i >= 0; i--) {
    const prev = previous[i] as ConversationMessage;
    if (prev.role === "user" && prev.content === msg.content) return true;
    if (prev.role === "assistant" && (truthy(prev.content) || truthy(prev.tool_calls))) return false;
  }
  return false;
}

/**
 * The session's messages in the OpenAI chat shape, ordered by (timestamp, id) (on a newer
 * agent's file: the rows it replays, `active = 1`, by id); with
 * `includeAncestors`, the messages of its whole parent chain, root first, with replayed
 * resume prompts removed. An unknown session gives `[]`.
 */
export function getMessagesAsConversation(
  ctx: StoreContext,
  sessionId: string,
  o?: { includeAncestors?: boolean },
): ConversationMessage[] {
  const id = requireId("sessionId", sessionId);
  const includeAncestors = options("options", o).includeAncestors;
  if (includeAncestors !== undefined && typeof includeAncestors !== "boolean") {
    throw new InvalidArgumentError("includeAncestors", "includeAncestors must be a boolean");
  }
  // A newer agent's file replays its active rows only, by id (see file-views.ts).
  const reads = ctx.reads;
  const rows: ReplayRow[] = includeAncestors
    ? readSnapshot(ctx, () => {
        const args = { session_ids: JSON.stringify(lineageRootToSession(ctx, id)) };
        return reads
          ? ctx.conn.all<ReplayRow>(reads.lineageReplaySql, [args])
          : ctx.conn.allOf(lineageRowsQ, args);
      })
    : reads
      ? ctx.conn.all<ReplayRow>(reads.replaySql, [{ session_id: id }])
      : ctx.conn.allOf(sessionRowsQ, { session_id: id });
  const messages: ConversationMessage[] = [];
  for (const row of rows) {
    const msg = toConversationMessage(row);
    if (includeAncestors && isReplayedUserPrompt(messages, msg)) continue;
    messages.push(msg);
  }
  return messages;
}
