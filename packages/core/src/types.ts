// Rows as the stores return them, and the inputs and options of the `SessionStore` methods.
import type { MessageRow as StoredMessageRow, SessionRow as StoredSessionRow } from "@hermes/schema";
import type { SessionFilterOptions } from "./listing/session-filter-arguments.js";
import type { MessageViewFields } from "./read-model/message-view-fields.js";
import type { SessionViewFields } from "./read-model/session-view-fields.js";

/**
 * A session as `getSession` and every other session read return it: every column of `sessions`
 * (`@hermes/schema`), plus the newer agents' flags and provenance where the file has them
 * ({@link SessionViewFields}: absent on a v11 file).
 */
export type SessionRow = StoredSessionRow & SessionViewFields;

/**
 * A message as `getMessages` returns it: every column of `messages`, with `tool_calls`
 * parsed (an array; unparsable text gives `[]`; `null` when none were stored), plus the newer
 * agents' identity and view state where the file has them ({@link MessageViewFields}).
 */
export type MessageRow = Omit<StoredMessageRow, "tool_calls"> & {
  tool_calls: unknown[] | Record<string, unknown> | null;
} & MessageViewFields;

/** The new session of `createSession` (camelCase arguments; the row keeps the column names). */
export interface CreateSessionInput {
  id: string;
  source: string;
  model?: string | null;
  modelConfig?: Record<string, unknown> | null;
  systemPrompt?: string | null;
  userId?: string | null;
  parentSessionId?: string | null;
}

/** The session `ensureSession` creates when it is missing (`source` defaults to `unknown`). */
export interface EnsureSessionInput {
  id: string;
  source?: string;
  model?: string | null;
}

/**
 * Token, cost and billing figures of `updateTokenCounts`: counters are added (or set, with
 * `absolute`); cost status columns take the new value; billing columns and `model` are only
 * filled when empty.
 */
export interface UpdateTokenCountsInput {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  apiCallCount?: number;
  model?: string | null;
  estimatedCostUsd?: number | null;
  actualCostUsd?: number | null;
  costStatus?: string | null;
  costSource?: string | null;
  pricingVersion?: string | null;
  billingProvider?: string | null;
  billingBaseUrl?: string | null;
  billingMode?: string | null;
  /** Set the counters to these values instead of adding them. */
  absolute?: boolean;
}

/** One message of `appendMessage`/`appendMessages`; JSON fields are stored as compact JSON text. */
export interface AppendMessageInput {
  sessionId: string;
  role: string;
  content?: string | null;
  toolName?: string | null;
  toolCalls?: unknown[] | Record<string, unknown> | null;
  toolCallId?: string | null;
  tokenCount?: number | null;
  finishReason?: string | null;
  reasoning?: string | null;
  reasoningContent?: string | null;
  reasoningDetails?: unknown;
  codexReasoningItems?: unknown;
  codexMessageItems?: unknown;
}

/** One message in the OpenAI chat shape (`getMessagesAsConversation`). */
export interface ConversationMessage {
  role: string;
  content: string | null;
  tool_call_id?: string;
  tool_name?: string;
  tool_calls?: unknown;
  reasoning?: string;
  reasoning_content?: string;
  reasoning_details?: unknown;
  codex_reasoning_items?: unknown;
  codex_message_items?: unknown;
}

/** Filters and paging of `searchMessages` (`limit` default 20, at most `SEARCH_LIMITS.maxLimit`). */
export interface SearchMessagesOptions {
  sourceFilter?: string[];
  excludeSources?: string[];
  roleFilter?: string[];
  limit?: number;
  offset?: number;
  /**
   * A newer agent's file: also search sessions it flags archived (left out by default, as the
   * listings leave them out). No effect where the database has no such flag.
   */
  includeArchived?: boolean;
  /** A newer agent's file: also search sessions it flags hidden (left out by default, as the listings do). */
  includeHidden?: boolean;
  /**
   * Aborts the call: it rejects with `ABORTED` (`AbortedError`). The SQLite
   * store checks it before starting, and ends the read worker running the query when it aborts
   * mid-query (the rejection follows within milliseconds); a backend may only check it between steps.
   */
  signal?: AbortSignal;
}

/** One message of a hit's context. */
export interface SearchContextMessage {
  role: string;
  content: string;
}

/** One search result, with the reference's keys (snake_case column names). */
export interface SearchHit {
  id: number;
  session_id: string;
  role: string;
  /** An excerpt with the match between `>>>` and `<<<` (ranked), or 120 characters around it. */
  snippet: string;
  timestamp: number;
  tool_name: string | null;
  source: string;
  model: string | null;
  /** `started_at` of the hit's session. */
  session_started: number;
  /** Previous message of the session, the hit, next message; content cut to 200 characters. */
  context: SearchContextMessage[];
  /** The hit's `message_uid`, where the file has the column (v31). */
  message_uid?: string | null;
}

/** A session row with `last_active`: its newest message's time, else `started_at`. */
export type SessionWithLastActive = SessionRow & { last_active: number };

/**
 * A row of `listSessionsRich`: the session, `last_active`, `preview` (the first user message, 60
 * characters), and `_lineage_root_id` on a compression root that shows its tip.
 */
export type RichSessionRow = SessionRow & {
  last_active: number;
  preview: string;
  _lineage_root_id?: string;
};

/** Filters and paging of `searchSessions` (`limit` default 20). */
export interface SearchSessionsOptions {
  source?: string;
  limit?: number;
  offset?: number;
  /** A newer agent's file: also list sessions it flags archived (left out by default, as the agent does). */
  includeArchived?: boolean;
  /** A newer agent's file: also list sessions it flags hidden (left out by default). */
  includeHidden?: boolean;
}

/**
 * Filters and paging of `listSessionsRich`. `models`, `startedAfter`, `startedBefore` and
 * `title` filter as in `listSessionPage` ({@link SessionFilterOptions}).
 */
export interface ListSessionsRichOptions extends SessionFilterOptions {
  source?: string;
  excludeSources?: string[];
  limit?: number;
  offset?: number;
  includeChildren?: boolean;
  projectCompressionTips?: boolean;
  /** A newer agent's file: also list sessions it flags archived (left out by default, as the agent does). */
  includeArchived?: boolean;
  /** A newer agent's file: also list sessions it flags hidden (left out by default). */
  includeHidden?: boolean;
}

/** A session with all its messages (`exportSession`). */
export type SessionExport = SessionRow & { messages: MessageRow[] };

/** Options of `maybeAutoPruneAndVacuum` (defaults: 90 days, 24 hours, vacuum on). */
export interface AutoPruneOptions {
  retentionDays?: number;
  minIntervalHours?: number;
  vacuum?: boolean;
  sessionsDir?: string;
}

/** What `maybeAutoPruneAndVacuum` did; `error` holds the message of a failure (it never throws). */
export interface AutoPruneResult {
  skipped: boolean;
  pruned: number;
  vacuumed: boolean;
  error?: string;
}
