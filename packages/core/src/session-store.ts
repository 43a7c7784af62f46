import type { BackendInfo } from "./backend-info.js";
import type { MessagePage, MessagePageOptions } from "./browsing/message-page-arguments.js";
import type { SessionPage, SessionPageOptions } from "./browsing/session-page-arguments.js";
import type { AnthropicConversation } from "./conversation/anthropic-format.js";
import type { ConversationWindow, ConversationWindowOptions } from "./conversation/conversation-window.js";
import type { ExportStreamOptions } from "./portable/export-options.js";
import type { ForkSessionOptions } from "./portable/fork-arguments.js";
import type { IterMessagesOptions } from "./portable/iter-messages-arguments.js";
import type { PortableSession } from "./portable/jsonl-format.js";
import type { ExportReport, JsonlDestination } from "./portable/jsonl-writer.js";
import type { Lineage } from "./portable/lineage.js";
import type { ImportReport, ImportSessionsOptions, ImportSource } from "./portable/run-import.js";
import type { UsageStatsOptions, UsageStatsRow } from "./portable/usage-stats-arguments.js";
import type { PruneSessionsOptions } from "./retention/prune-sessions-options.js";
import type { SearchIndexProgress, SearchIndexReport } from "./search/search-index-report.js";
import type { StoreChange, WatchChangesOptions } from "./store-change.js";
import type { StoreStats } from "./store-stats.js";
import type {
  AppendMessageInput,
  AutoPruneOptions,
  AutoPruneResult,
  ConversationMessage,
  CreateSessionInput,
  EnsureSessionInput,
  ListSessionsRichOptions,
  MessageRow,
  RichSessionRow,
  SearchHit,
  SearchMessagesOptions,
  SearchSessionsOptions,
  SessionExport,
  SessionRow,
  SessionWithLastActive,
  UpdateTokenCountsInput,
} from "./types.js";

/**
 * A session store: sessions, messages, titles with lineage, full-text search, export, import and
 * retention, with the behaviour of Hermes Agent's `state.db` (the Python name of each method is
 * in brackets). `@hermes/store` serves it on SQLite, `@hermes/postgres` on PostgreSQL; a third
 * party's backend implements it and proves it with `@hermes/conformance`.
 *
 * Conventions of every backend:
 * - Every method is async (or returns an async iterable) and never blocks the event loop.
 * - Rows keep the database's snake_case column names; arguments are camelCase objects.
 * - "Not found" is `null`; optional keys that do not apply are absent, never `undefined`.
 * - Bad arguments are `INVALID_ARGUMENT` (limits and offsets are non-negative integers, ids
 *   non-empty strings), before anything is written. Errors are `HermesStoreError`s: branch on
 *   `code`.
 * - Timestamps are Unix epoch seconds (floats); writes take them from the store's clock.
 * - A call after `close()` is `STORE_CLOSED`.
 * - A read-only store (`readOnly`) serves every read; every write method rejects before any
 *   effect, with `STORE_READ_ONLY` (`StoreReadOnlyError`) or, for a database of a newer schema,
 *   `SCHEMA_NEWER` (`SchemaNewerError`).
 */
export interface SessionStore {
  /** What the store runs on (`kind` tells which; e.g. the SQLite file's `path`). */
  readonly backend: BackendInfo;
  /**
   * Whether every write rejects: opened read-only (e.g. `readOnly: true`), or found unwritable
   * or of a newer schema at open. Fixed for the store's life.
   */
  readonly readOnly: boolean;
  /** Why writes are impossible, in words (`it was opened with readOnly: true`, …); `null` when writable. */
  readonly readOnlyReason: string | null;

  // Sessions ------------------------------------------------------------------------------

  /** Creates a session; an existing id is left as it is (first write wins). Returns the id. [create_session] */
  createSession(s: CreateSessionInput): Promise<string>;
  /** Creates the session if missing (`source` defaults to `unknown`); never overwrites. */
  ensureSession(s: EnsureSessionInput): Promise<void>;
  /** Marks a session ended; the first end wins. Unknown ids are a no-op. [end_session] */
  endSession(id: string, endReason: string): Promise<void>;
  /** Clears `ended_at` and `end_reason`, so the next end is recorded again. [reopen_session] */
  reopenSession(id: string): Promise<void>;
  /** Replaces the stored system prompt snapshot. [update_system_prompt] */
  updateSystemPrompt(id: string, systemPrompt: string): Promise<void>;
  /** Adds (or with `absolute`, sets) token, cost and API-call counters; never creates a session. [update_token_counts] */
  updateTokenCounts(id: string, u?: UpdateTokenCountsInput): Promise<void>;
  /** Every column of one session, or `null`. [get_session] */
  getSession(id: string): Promise<SessionRow | null>;
  /** An exact id, else the one id that starts with `idOrPrefix`, else `null`. [resolve_session_id] */
  resolveSessionId(idOrPrefix: string): Promise<string | null>;
  /** Number of sessions, of one source when `source` is non-empty. [session_count] */
  sessionCount(o?: { source?: string }): Promise<number>;
  /** Number of message rows, of one session when `sessionId` is non-empty. [message_count] */
  messageCount(o?: { sessionId?: string }): Promise<number>;

  // Listing and lineage -------------------------------------------------------------------

  /**
   * Sessions with `last_active`, most recently used first (`limit` default 20). Sessions the
   * database flags archived or hidden (a newer agent's file) are left out unless
   * `includeArchived` / `includeHidden`. [search_sessions]
   */
  searchSessions(o?: SearchSessionsOptions): Promise<SessionWithLastActive[]>;
  /**
   * Sessions for a picker, newest start first, with `last_active` and `preview`; children hidden
   * unless `includeChildren` (branches excepted); compression roots show their tip unless
   * `projectCompressionTips: false`; archived and hidden sessions left out as by
   * `searchSessions`. [list_sessions_rich]
   */
  listSessionsRich(o?: ListSessionsRichOptions): Promise<RichSessionRow[]>;
  /** The latest session of `id`'s compression chain; `id` when it has none. [get_compression_tip] */
  getCompressionTip(id: string): Promise<string>;
  /** The session a resume of `id` should load (the first descendant with messages, else `id`). */
  resolveResumeSessionId(id: string): Promise<string>;

  // Titles ----------------------------------------------------------------------------------

  /**
   * Sets (or with `null`/blank, clears) a title after `sanitizeTitle`; `false` for an unknown
   * session. `TITLE_TOO_LONG`, `TITLE_CONFLICT`. [set_session_title]
   */
  setSessionTitle(id: string, title: string | null): Promise<boolean>;
  /** The title of a session; `null` when it has none or does not exist. [get_session_title] */
  getSessionTitle(id: string): Promise<string | null>;
  /** The session titled exactly `title` (case-sensitive, not sanitized), or `null`. [get_session_by_title] */
  getSessionByTitle(title: string): Promise<SessionRow | null>;
  /** A title's newest lineage continuation (`<title> #n`), else the exact match, else `null`. [resolve_session_by_title] */
  resolveSessionByTitle(title: string): Promise<string | null>;
  /** The next title of a lineage: `X`, or `X #n` above the largest number in use. [get_next_title_in_lineage] */
  getNextTitleInLineage(baseTitle: string): Promise<string>;

  // Messages --------------------------------------------------------------------------------

  /**
   * Appends a message (timestamp = now) and bumps the session's `message_count` and
   * `tool_call_count` in the same transaction; returns its row id. Unknown session:
   * `SESSION_NOT_FOUND`, nothing written. [append_message]
   */
  appendMessage(m: AppendMessageInput): Promise<number>;
  /**
   * Appends several messages (one agent turn) all or none, in one transaction; returns their row
   * ids in order. Any invalid message or unknown session writes nothing.
   */
  appendMessages(batch: readonly AppendMessageInput[]): Promise<number[]>;
  /** Every message of a session by (timestamp, id), `tool_calls` parsed. [get_messages] */
  getMessages(sessionId: string): Promise<MessageRow[]>;
  /**
   * The conversation in the OpenAI chat shape; with `includeAncestors`, the whole parent chain
   * root first, replayed resume prompts removed. [get_messages_as_conversation]
   */
  getMessagesAsConversation(
    sessionId: string,
    o?: { includeAncestors?: boolean },
  ): Promise<ConversationMessage[]>;
  /** Deletes a session's messages and resets its message and tool-call counters. [clear_messages] */
  clearMessages(sessionId: string): Promise<void>;

  // Search ----------------------------------------------------------------------------------

  /**
   * Full-text search with the reference's ranking, `>>>snippets<<<`, filters and 3-message
   * context; never fails on user syntax; CJK per term. Limits: `SEARCH_LIMITS`. Sessions the
   * database flags hidden or archived are left out as by `searchSessions`, unless
   * `includeHidden` / `includeArchived`. [search_messages]
   */
  searchMessages(query: string, o?: SearchMessagesOptions): Promise<SearchHit[]>;
  /** State of every search index (`ok` when none is missing or damaged). */
  verifySearchIndex(): Promise<SearchIndexReport>;
  /** Rebuilds every search index from `messages`. */
  rebuildSearchIndex(o?: { onProgress?: (progress: SearchIndexProgress) => void }): Promise<void>;

  // Export, retention, metadata -----------------------------------------------------------

  /** A session with all its messages, or `null`. [export_session] */
  exportSession(id: string): Promise<SessionExport | null>;
  /** Every session (of one source) with its messages, in `searchSessions` order. [export_all] */
  exportAll(o?: { source?: string }): Promise<Array<SessionWithLastActive & { messages: MessageRow[] }>>;
  /**
   * Deletes a session and its messages, orphaning its children; with `sessionsDir`, removes its
   * transcript files. `false` for an unknown session. [delete_session]
   */
  deleteSession(id: string, o?: { sessionsDir?: string }): Promise<boolean>;
  /**
   * Deletes ended sessions started more than `olderThanDays` (90) days ago; returns how many.
   * Never a pinned session; archived or hidden ones only with `includeArchived` /
   * `includeHidden` (see {@link PruneSessionsOptions}). [prune_sessions]
   */
  pruneSessions(o?: PruneSessionsOptions): Promise<number>;
  /** The value stored under `key` in `state_meta`, or `null`. [get_meta] */
  getMeta(key: string): Promise<string | null>;
  /** Stores `value` under `key` in `state_meta`. [set_meta] */
  setMeta(key: string, value: string): Promise<void>;
  /** Reclaims the space of deleted rows (SQLite `VACUUM`; PostgreSQL `VACUUM ANALYZE`). [vacuum] */
  vacuum(): Promise<void>;
  /**
   * Startup housekeeping (`runAutoPrune`): prune, vacuum, at most once per interval; never
   * throws (failures come back in `error`), except on a read-only store, which refuses it like
   * every write.
   */
  maybeAutoPruneAndVacuum(o?: AutoPruneOptions): Promise<AutoPruneResult>;

  // Portable sessions -----------------------------------------------------------------------

  /**
   * Every matching session with its messages (rows as stored, `tool_calls` as JSON text), one
   * session at a time, from one consistent snapshot. Options are checked before it returns.
   */
  exportStream(o?: ExportStreamOptions): AsyncIterable<PortableSession>;
  /** Writes the JSONL interchange format (header line, one session per line) in constant memory. */
  exportJsonl(destination: JsonlDestination, o?: ExportStreamOptions): Promise<ExportReport>;
  /** A Markdown rendering of a session (`sessionToMarkdown`), or `null` for an unknown session. */
  exportSessionMarkdown(id: string): Promise<string | null>;
  /** Imports sessions from a JSONL file or an iterable (`runImport`); idempotent, parents first. */
  importSessions(source: ImportSource, o?: ImportSessionsOptions): Promise<ImportReport>;
  /** A session's messages page by page (cursor `afterId`), in conversation order. */
  iterMessages(sessionId: string, o?: IterMessagesOptions): AsyncIterable<MessageRow>;
  /** The last messages of a session, bounded by count and tokens, without reading the rest. */
  getConversationWindow(sessionId: string, o?: ConversationWindowOptions): Promise<ConversationWindow>;
  /** The conversation in the Anthropic Messages shape (`system` apart, tool blocks). */
  getMessagesAsAnthropic(
    sessionId: string,
    o?: { includeAncestors?: boolean },
  ): Promise<AnthropicConversation>;
  /** Forks a session (messages up to `atMessageId`) with a lineage title; returns the new row. */
  forkSession(id: string, o?: ForkSessionOptions): Promise<SessionRow>;
  /** Ancestors and descendants of a session with the kind of each link, or `null`. */
  getLineage(id: string, o?: { maxDescendants?: number }): Promise<Lineage | null>;
  /**
   * A page of sessions for a browser, most recently active chain first (keyset paging: following
   * `nextCursor` reaches every session, stable while sessions are added), with filters. A
   * compression continuation or a sub-agent run is not listed on its own: it counts in the
   * `chain_*` figures of the session it continues.
   */
  listSessionPage(o?: SessionPageOptions): Promise<SessionPage>;
  /**
   * A page of a session's messages in conversation order (the first or last page, around a
   * message, before or after one) with the number of messages before and after it.
   */
  getMessagePage(sessionId: string, o?: MessagePageOptions): Promise<MessagePage>;
  /** Sessions, messages, tokens and cost grouped by source, model or UTC day. */
  usageStats(o: UsageStatsOptions): Promise<UsageStatsRow[]>;

  // Lifecycle -------------------------------------------------------------------------------

  /** Counters of the write path; `backend` says which shape (see {@link StoreStats}). */
  stats(): StoreStats;
  /** Waits for queued writes, then releases the connection(s). Idempotent. */
  close(): Promise<void>;
  /** `close()`, for `await using store = …`. */
  [Symbol.asyncDispose](): Promise<void>;

  // Change feed (optional: SQLite has it; PostgreSQL not yet) -----------------------------

  /**
   * What is written (by this store or another process) as it happens: new session ids, sessions
   * that received messages, the highest message id (a cursor) and, with `includeMessages`, the
   * new messages. Ends when `signal` aborts. A backend without it leaves it undefined.
   */
  watchChanges?(o?: WatchChangesOptions): AsyncIterable<StoreChange>;
}
