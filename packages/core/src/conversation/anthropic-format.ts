import type { ConversationMessage } from "../types.js";

/** A content block of the Anthropic Messages API. */
export type AnthropicContentBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error?: boolean };

/** One message of the Anthropic Messages API (roles alternate; tool results are user turns). */
export interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicContentBlock[];
}

/** A conversation in the Anthropic shape: the system prompt apart, then the turns. */
export interface AnthropicConversation {
  /** The session's system prompt, then any `system` messages; absent when there is none. */
  system?: string;
  messages: AnthropicMessage[];
}

/** The `input` object of a tool call from its OpenAI `arguments` JSON text. */
function toolInput(args: unknown): Record<string, unknown> {
  if (typeof args === "object" && args !== null && !Array.isArray(args))
    return args as Record<string, unknown>;
  if (typeof args === "string") {
    if (args.trim() === "") return {};
    try {
      const parsed: unknown = JSON.parse(args);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
        return parsed as Record<string, unknown>;
      }
    } catch {
      // Not JSON: kept verbatim below rather than lost.
    }
    return { _raw_arguments: args };
  }
  return args === undefined || args === null ? {} : { _raw_arguments: args };
}

/** `tool_use` blocks from OpenAI-shaped `tool_calls` (`{ id, function: { name, arguments } }`). */
function toolUseBlocks(toolCalls: unknown): AnthropicContentBlock[] {
  const calls = Array.isArray(toolCalls) ? toolCalls : toolCalls ? [toolCalls] : [];
  const blocks: AnthropicContentBlock[] = [];
  calls.forEach((call, i) => {
    if (typeof call !== "object" || call === null) return;
    const c = call as Record<string, unknown>;
    const fn = (typeof c.function === "object" && c.function !== null ? c.function : c) as Record<
      string,
      unknown
    >;
    const name = typeof fn.name === "string" ? fn.name : "unknown_tool";
    const id = typeof c.id === "string" && c.id !== "" ? c.id : `toolu_${i}`;
    blocks.push({ type: "tool_use", id, name, input: toolInput(fn.arguments ?? c.input) });
  });
  return blocks;
}

/** What the API gets for a call the history has no result for (e.g. an interrupted turn). */
export const MISSING_TOOL_RESULT = "No result was recorded for this tool call.";

/**
 * The API requires every `tool_use` to be answered by a `tool_result` in the very next user turn,
 * and every `tool_result` to answer a `tool_use` of the turn before. Stored histories break both
 * (a call whose result was never written, a window that starts after the call), so: a missing
 * result becomes an error result saying so; a result with no call becomes a text block.
 */
function pairToolResults(messages: AnthropicMessage[]): void {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== "user") continue;
    const prev = messages[i - 1];
    const asked = new Set(
      prev?.role === "assistant" ? prev.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])) : [],
    );
    const answered = new Set<string>();
    const results: AnthropicContentBlock[] = [];
    const rest: AnthropicContentBlock[] = [];
    for (const b of m.content) {
      if (b.type !== "tool_result") rest.push(b);
      else if (asked.has(b.tool_use_id) && !answered.has(b.tool_use_id)) {
        answered.add(b.tool_use_id);
        results.push(b);
      } else
        rest.push({ type: "text", text: `Tool result (${b.tool_use_id || "unknown call"}):\n${b.content}` });
    }
    for (const id of asked) {
      if (!answered.has(id))
        results.push({ type: "tool_result", tool_use_id: id, content: MISSING_TOOL_RESULT, is_error: true });
    }
    // Results in the order of the calls, as the API expects them.
    const order = [...asked];
    results.sort(
      (a, b) =>
        order.indexOf((a as { tool_use_id: string }).tool_use_id) -
        order.indexOf((b as { tool_use_id: string }).tool_use_id),
    );
    m.content = [...results, ...rest];
  }
  // An assistant turn with calls followed by another assistant turn cannot happen (same-role
  // turns are merged); a last turn with calls is left open for the caller to answer.
}

/**
 * Converts a conversation in the OpenAI chat shape (`getMessagesAsConversation`) to the
 * Anthropic Messages shape: `system` messages join the system prompt; assistant tool calls
 * become `tool_use` blocks; `tool` messages become `tool_result` blocks of a user turn;
 * consecutive turns of the same role are merged (the API wants alternating roles, and all
 * results of one assistant turn in the next user turn); empty text is dropped (the API rejects
 * empty text blocks); a call without a recorded result gets an error result
 * ({@link MISSING_TOOL_RESULT}) and a result without its call becomes text, so the output is
 * accepted by the API as is. Reasoning is not carried: Anthropic thinking blocks need the provider's
 * signature, which other providers' reasoning lacks.
 *
 * @example
 * const { system, messages } = toAnthropicMessages(await store.getMessagesAsConversation(id), prompt)
 */
export function toAnthropicMessages(
  conversation: readonly ConversationMessage[],
  systemPrompt?: string | null,
): AnthropicConversation {
  const system: string[] = [];
  if (typeof systemPrompt === "string" && systemPrompt.trim() !== "") system.push(systemPrompt);
  const messages: AnthropicMessage[] = [];
  const push = (role: "user" | "assistant", blocks: AnthropicContentBlock[]) => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last !== undefined && last.role === role) {
      // Tool results first in a user turn, as the API requires.
      if (role === "user") {
        const results = [...last.content, ...blocks].filter((b) => b.type === "tool_result");
        const rest = [...last.content, ...blocks].filter((b) => b.type !== "tool_result");
        last.content = [...results, ...rest];
      } else last.content.push(...blocks);
    } else messages.push({ role, content: blocks });
  };
  const text = (content: string | null): AnthropicContentBlock[] =>
    typeof content === "string" && content.trim() !== "" ? [{ type: "text", text: content }] : [];

  for (const m of conversation) {
    switch (m.role) {
      case "system":
        if (typeof m.content === "string" && m.content.trim() !== "") system.push(m.content);
        break;
      case "assistant":
        push("assistant", [...text(m.content), ...toolUseBlocks(m.tool_calls)]);
        break;
      case "tool":
        push("user", [{ type: "tool_result", tool_use_id: m.tool_call_id ?? "", content: m.content ?? "" }]);
        break;
      default:
        push("user", text(m.content));
    }
  }
  pairToolResults(messages);
  const out: AnthropicConversation = { messages };
  if (system.length > 0) out.system = system.join("\n\n");
  return out;
}
