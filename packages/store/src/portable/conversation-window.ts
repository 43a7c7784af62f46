import { InvalidArgumentError } from "../errors.js";
import { toConversationMessage } from "../operations/conversation.js";
import { readSnapshot } from "../read-snapshot.js";
import type { StoreContext } from "../store-context.js";
import type { ConversationMessage } from "../types.js";
import { nonNegativeInt, options, requireId } from "../validate.js";

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

// Newest first along idx_messages_session (scanned backwards): a window over the last messages
// of a million-message session reads those messages only.
const TAIL_SQL = `SELECT id, timestamp, role, content, tool_call_id, tool_calls, tool_name, token_count, reasoning,
    reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items
  FROM messages
  WHERE session_id = :session_id AND timestamp <= :before_t AND (timestamp < :before_t OR id < :before_id)
  ORDER BY timestamp DESC, id DESC LIMIT :limit`;
const COUNT_SQL = "SELECT COUNT(*) AS n FROM messages WHERE session_id = ?";

const len = (s: string | null) => (s === null ? 0 : s.length);

/** Tokens of a stored message: its `token_count`, else ~4 characters per token. */
export function estimateTokens(row: WindowRow): number {
  if (typeof row.token_count === "number" && row.token_count > 0) return row.token_count;
  const chars = len(row.content) + len(row.tool_calls) + len(row.reasoning) + len(row.reasoning_content);
  return Math.ceil(chars / 4) + 4; // + a few tokens of per-message framing
}

/**
 * Picks a conversation window from pages of a session's messages read newest first (shared
 * by the backends, which only fetch the pages): ask for `wanted` rows before `(beforeT,
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

/** Checks the arguments of `getConversationWindow` (shared with other backends). */
export function conversationWindowArguments(
  sessionId: unknown,
  o: ConversationWindowOptions | undefined,
): { id: string; lastMessages: number; maxTokens: number } {
  const id = requireId("sessionId", sessionId);
  const opts = options("options", o);
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

/**
 * The last messages of a session, bounded by count and/or tokens, read backwards from the end
 * (never the whole session), in the shape of `getMessagesAsConversation`. Leading tool results
 * whose call fell outside the window are dropped, so the window can be sent to a model as is.
 * An unknown session gives an empty window.
 */
export function getConversationWindow(
  ctx: StoreContext,
  sessionId: string,
  o?: ConversationWindowOptions,
): ConversationWindow {
  const { id, lastMessages, maxTokens } = conversationWindowArguments(sessionId, o);
  // A newer agent's file: its active rows, newest id first (file-views.ts).
  const tailSql = ctx.reads?.windowTailSql ?? TAIL_SQL;
  const countSql = ctx.reads?.windowCountSql ?? COUNT_SQL;
  return readSnapshot(ctx, () => {
    const total = ctx.conn.get<{ n: number }>(countSql, [id])?.n ?? 0;
    const picker = new WindowPicker(lastMessages, maxTokens);
    while (picker.wanted > 0) {
      picker.take(
        ctx.conn.all<WindowRow>(tailSql, [
          { session_id: id, before_t: picker.beforeT, before_id: picker.beforeId, limit: picker.wanted },
        ]),
      );
    }
    return picker.result(total);
  });
}
