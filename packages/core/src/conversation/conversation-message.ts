import { parsePythonJson } from "../messages/parse-python-json.js";
import type { ConversationMessage } from "../types.js";
import { stripPythonWhitespace } from "./python-whitespace.js";
import { sanitizeContext } from "./sanitize-context.js";

/** Longest parent chain a lineage walk follows (`includeAncestors`, `getLineage`), as the reference. */
export const MAX_LINEAGE_HOPS = 100;

/** The columns a conversation replay reads (`finish_reason`, ids and timestamps are not replayed). */
export interface ReplayRow {
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

/** The columns a conversation replay reads, as a list for a SELECT. */
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
] as const satisfies ReadonlyArray<keyof ReplayRow>;

/** Python truthiness of a decoded JSON value (`[]`, `{}`, `""`, `0`, `false`, `null` are falsy). */
function pythonTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === "") return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

/** Parses stored JSON text; `fallback` when it does not parse (one bad row never breaks a replay). */
function parseOr(text: string, fallback: unknown): unknown {
  try {
    return parsePythonJson(text);
  } catch {
    return fallback;
  }
}

/**
 * One stored row in the OpenAI chat shape, keys present only where the reference sets them:
 * user and assistant content cleaned of recalled-memory scaffolding (`sanitizeContext`) and
 * stripped as Python strips, JSON columns parsed (a value that does not parse gives `[]` for
 * tool calls, `null` otherwise), reasoning only on assistant turns.
 */
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
    if (prev.role === "assistant" && (pythonTruthy(prev.content) || pythonTruthy(prev.tool_calls)))
      return false;
  }
  return false;
}
