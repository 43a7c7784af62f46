import type { SessionRow, MessageRow as StoredMessageRow } from "@hermes/schema";

export type { SessionRow };

/**
 * A message as `getMessages` returns it: every column of `messages`, with `tool_calls`
 * parsed (an array; unparsable text gives `[]`; `null` when none were stored).
 */
export type MessageRow = Omit<StoredMessageRow, "tool_calls"> & {
  tool_calls: unknown[] | Record<string, unknown> | null;
};

export interface CreateSessionInput {
  id: string;
  source: string;
  model?: string | null;
  modelConfig?: Record<string, unknown> | null;
  systemPrompt?: string | null;
  userId?: string | null;
  parentSessionId?: string | null;
}

export interface EnsureSessionInput {
  id: string;
  source?: string;
  model?: string | null;
}

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

export interface SearchMessagesOptions {
  sourceFilter?: string[];
  excludeSources?: string[];
  roleFilter?: string[];
  limit?: number;
  offset?: number;
}

/** One search result. */
export interface SearchHit {
  id: number;
  session_id: string;
  role: string;
  snippet: string;
  timestamp: number;
  tool_name: string | null;
  source: string;
  model: string | null;
  session_started: number;
  context: Array<{ role: string; content: string }>;
}

export type SessionWithLastActive = SessionRow & { last_active: number };

export type RichSessionRow = SessionRow & {
  last_active: number;
  preview: string;
  _lineage_root_id?: string;
};

/** Options of `searchSessions`. */
export interface SearchSessionsOptions {
  source?: string;
  limit?: number;
  offset?: number;
  /** A newer agent's file: also list sessions it flags archived (left out by default, as the agent does). */
  includeArchived?: boolean;
  /** A newer agent's file: also list sessions it flags hidden (left out by default). */
  includeHidden?: boolean;
}

export interface ListSessionsRichOptions {
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

export type SessionExport = SessionRow & { messages: MessageRow[] };

export interface AutoPruneOptions {
  retentionDays?: number;
  minIntervalHours?: number;
  vacuum?: boolean;
  sessionsDir?: string;
}

export interface AutoPruneResult {
  skipped: boolean;
  pruned: number;
  vacuumed: boolean;
  error?: string;
}
