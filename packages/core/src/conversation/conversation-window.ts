import { InvalidArgumentError } from "../errors/hermes-store-error.js";
import type { ConversationMessage } from "../types.js";
import { nonNegativeInt, optionsObject, requireId } from "../validation/arguments.js";
import { toConversationMessage } from "./conversation-message.js";

/** Options of `getConversationWindow`. */
export interface ConversationWindowOptions {
  /** At most this many messages (default 100 when `maxTokens` is not given either). */
  lastMessages?: number;
  /**
   * At most about this many tokens: a message counts its `token_count` when stored, else
   * about one token per 4 characters of its content, tool calls and reasoning. The newest
   * message is always included, even when it alone is larger.
   */
  maxTokens?: number;
}

/** The tail of a conversation, ready to resume. */
export interface ConversationWindow {
  /** The newest messages in the OpenAI chat shape, oldest first; never starting with a tool result. */
  messages: ConversationMessage[];
  /** Messages of the session before the window. */
  omittedMessages: number;
  /** Estimated tokens of `messages`. */
  estimatedTokens: number;
}

/** The columns a conversation window reads. */
export interface WindowRow {
  id: number;
  timestamp: number;
  role: string;
  content: string | null;
  tool_call_id: string | null;
  tool_calls: string | null;
  tool_name: string | null;
  token_count: number | null;
  reasoning: string | null;
  reasoning_content: string | null;
  reasoning_details: string | null;
  codex_reasoning_items: string | null;
  codex_message_items: string | null;
}

const PAGE = 200;

const len = (s: string | null) => (s === null ? 0 : s.length);

/** Tokens of a stored message: its `token_count`, else ~4 characters per token. */
export function estimateTokens(row: WindowRow): number {
  if (typeof row.token_count === "number" && row.token_count > 0) return row.token_count;
  const chars = len(row.content) + len(row.tool_calls) + len(row.reasoning) + len(row.reasoning_content);
  return Math.ceil(chars / 4) + 4; // + a few tokens of per-message framing
}

/**
 * Picks a conversation window from pages of a session's messages read newest first (a backend
 * only fetches the pages): ask for `wanted` rows before `(beforeT,
 * beforeId)` while `wanted` > 0, hand each page to `take`, then read `result`.
 */
export class WindowPicker {
  readonly #lastMessages: number;
  readonly #maxTokens: number;
  readonly #picked: WindowRow[] = [];
  #tokens = 0;
  #done = false;
  /** The cursor: the next page holds the rows before this `(timestamp, id)`. */
  beforeT = Number.POSITIVE_INFINITY;
  beforeId = Number.MAX_SAFE_INTEGER;

  constructor(lastMessages: number, maxTokens: number) {
    this.#lastMessages = lastMessages;
    this.#maxTokens = maxTokens;
  }

  /** Rows the next page should hold; 0 when the window is complete. */
  get wanted(): number {
    return this.#done ? 0 : Math.min(PAGE, this.#lastMessages - this.#picked.length);
  }

  /** Takes a page (newest first) of at most `wanted` rows. */
  take(page: readonly WindowRow[]): void {
    const wanted = this.wanted;
    for (const row of page) {
      const t = estimateTokens(row);
      // The newest message is always included, even when it alone is over the budget.
      if (this.#picked.length > 0 && this.#tokens + t > this.#maxTokens) {
        this.#done = true;
        return;
      }
      this.#picked.push(row);
      this.#tokens += t;
      if (this.#picked.length >= this.#lastMessages) {
        this.#done = true;
        return;
      }
    }
    const last = page[page.length - 1];
    if (page.length < wanted || last === undefined) {
      this.#done = true;
      return;
    }
    this.beforeT = last.timestamp;
    this.beforeId = last.id;
  }

  /** The window, oldest first, given the session's message count. */
  result(total: number): ConversationWindow {
    const picked = [...this.#picked].reverse();
    let tokens = this.#tokens;
    // A tool result without its assistant call is rejected by chat APIs.
    while (picked.length > 1 && picked[0]!.role === "tool") tokens -= estimateTokens(picked.shift()!);
    return {
      messages: picked.map((row) => toConversationMessage(row)),
      omittedMessages: total - picked.length,
      estimatedTokens: tokens,
    };
  }
}

/** Checks the arguments of `getConversationWindow` (`INVALID_ARGUMENT`) and applies their defaults. */
export function conversationWindowArguments(
  sessionId: unknown,
  o: ConversationWindowOptions | undefined,
): { id: string; lastMessages: number; maxTokens: number } {
  const id = requireId("sessionId", sessionId);
  const opts = optionsObject("options", o);
  const maxTokens = nonNegativeInt("maxTokens", opts.maxTokens, Number.MAX_SAFE_INTEGER);
  const lastMessages = nonNegativeInt(
    "lastMessages",
    opts.lastMessages,
    opts.maxTokens === undefined ? 100 : Number.MAX_SAFE_INTEGER,
  );
  if (opts.lastMessages === 0)
    throw new InvalidArgumentError("lastMessages", "lastMessages must be at least 1");
  return { id, lastMessages, maxTokens };
}
