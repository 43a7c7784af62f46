import type { MessageRow as StoredMessageRow } from "@hermes/schema";
import { InvalidArgumentError } from "../errors/hermes-store-error.js";
import { toMessageViewFields } from "../read-model/message-view-fields.js";
import { jsonIfTruthy } from "../sessions/new-session-row.js";
import type { AppendMessageInput, MessageRow } from "../types.js";
import { optionalNumber, optionalString, optionsObject, requireId } from "../validation/arguments.js";
import { parsePythonJson } from "./parse-python-json.js";

/** The columns an append writes: every column but `id` (`timestamp` is filled at write time). */
export type NewMessageRow = Omit<StoredMessageRow, "id">;

/** A validated append: its row and how much it adds to the session's `tool_call_count`. */
export type PreparedMessage = { row: NewMessageRow; toolCallDelta: number };

/** Most messages one `appendMessages` call may write (it holds the write lock meanwhile). */
export const MAX_APPEND_BATCH = 10_000;

/**
 * JSON text for a value that is truthy in the reference's sense (`[]`, `{}`, `""`, `0`, `false`
 * are stored as NULL), or a typed error for a value JSON cannot hold (cycles, BigInt, functions).
 */
export function encodeJson(name: string, value: unknown): string | null {
  let text: string | null | undefined;
  try {
    text = jsonIfTruthy(value);
  } catch (error) {
    throw new InvalidArgumentError(name, `${name} cannot be stored as JSON: ${(error as Error).message}`);
  }
  // JSON.stringify returns undefined (no text at all) for functions and symbols.
  if (text === undefined) {
    throw new InvalidArgumentError(name, `${name} cannot be stored as JSON (got ${typeof value})`);
  }
  return text;
}

/**
 * Validates an append (`INVALID_ARGUMENT`) and turns it into the row to insert, `timestamp` 0
 * until write time.
 */
export function messageRowFor(input: AppendMessageInput): PreparedMessage {
  const m = optionsObject("message", input);
  const sessionId = requireId("sessionId", m.sessionId);
  const role = requireId("role", m.role);
  const toolCalls = m.toolCalls;
  if (toolCalls !== undefined && toolCalls !== null && typeof toolCalls !== "object") {
    throw new InvalidArgumentError("toolCalls", "toolCalls must be an array, an object or null");
  }
  const tokenCount = optionalNumber("tokenCount", m.tokenCount);
  if (tokenCount !== null && !Number.isInteger(tokenCount)) {
    throw new InvalidArgumentError("tokenCount", "tokenCount must be an integer");
  }
  // The reference counts a list by its length (an empty list adds 0) and anything else given as
  // one call (an object, even an empty one, adds 1). Only `tool_calls` counts: the role does not,
  // so a `tool` result row (which carries a tool_call_id, not tool_calls) adds 0.
  let toolCallDelta = 0;
  if (toolCalls !== undefined && toolCalls !== null) {
    toolCallDelta = Array.isArray(toolCalls) ? toolCalls.length : 1;
  }
  return {
    toolCallDelta,
    row: {
      session_id: sessionId,
      role,
      content: optionalString("content", m.content),
      tool_call_id: optionalString("toolCallId", m.toolCallId),
      tool_calls: encodeJson("toolCalls", toolCalls),
      tool_name: optionalString("toolName", m.toolName),
      timestamp: 0,
      token_count: tokenCount,
      finish_reason: optionalString("finishReason", m.finishReason),
      reasoning: optionalString("reasoning", m.reasoning),
      reasoning_content: optionalString("reasoningContent", m.reasoningContent),
      reasoning_details: encodeJson("reasoningDetails", m.reasoningDetails),
      codex_reasoning_items: encodeJson("codexReasoningItems", m.codexReasoningItems),
      codex_message_items: encodeJson("codexMessageItems", m.codexMessageItems),
    },
  };
}

/**
 * Parses stored `tool_calls` JSON; text that does not parse gives `[]`, as the reference (one
 * malformed row never breaks a page). NULL, and the empty text only a foreign writer could
 * store, give `null`.
 */
export function parseToolCalls(text: string | null): MessageRow["tool_calls"] {
  if (text === null || text === "") return null;
  try {
    return parsePythonJson(text) as MessageRow["tool_calls"];
  } catch {
    return [];
  }
}

/**
 * A stored row with `tool_calls` parsed, and the view columns a newer agent's file adds in the
 * read model's shape (`toMessageViewFields`). The row object is converted in place (it is fresh from
 * the driver): copying every row of a 20,000-message session would double the allocation.
 */
export function toMessageRow(row: StoredMessageRow): MessageRow {
  const converted = row as unknown as MessageRow;
  converted.tool_calls = parseToolCalls(row.tool_calls);
  toMessageViewFields(converted as unknown as Record<string, unknown>);
  return converted;
}
