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

  return readSnapshot(ctx, () => {
    const total = ctx.conn.get<{ n: number }>(COUNT_SQL, [id])?.n ?? 0;
    const picked: WindowRow[] = [];
    let tokens = 0;
    let beforeT = Number.POSITIVE_INFINITY;
    let beforeId = Number.MAX_SAFE_INTEGER;
    scan: while (picked.length < lastMessages) {
      const wanted = Math.min(PAGE, lastMessages - picked.length);
      const page = ctx.conn.all<WindowRow>(TAIL_SQL, [
        { session_id: id, before_t: beforeT, before_id: beforeId, limit: wanted },
      ]);
      for (const row of page) {
        const t = estimateTokens(row);
        if (picked.length > 0 && tokens + t > maxTokens) break scan;
        picked.push(row);
        tokens += t;
        if (picked.length >= lastMessages) break scan;
      }
      if (page.length < wanted) break;
      const last = page[page.length - 1]!;
      beforeT = last.timestamp;
      beforeId = last.id;
    }
    picked.reverse();
    // A tool result without its assistant call is rejected by chat APIs.
    while (picked.length > 1 && picked[0]!.role === "tool") tokens -= estimateTokens(picked.shift()!);
    return {
      messages: picked.map((row) => toConversationMessage(row)),
      omittedMessages: total - picked.length,
      estimatedTokens: tokens,
    };
  });
}
