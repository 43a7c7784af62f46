import type {
  AnthropicConversation,
  AppendMessageInput,
  AutoPruneOptions,
  AutoPruneResult,
  ConversationMessage,
  ConversationWindow,
  ConversationWindowOptions,
  CreateSessionInput,
  EnsureSessionInput,
  ExportReport,
  ExportStreamOptions,
  ForkSessionOptions,
  ImportReport,
  ImportSessionsOptions,
  ImportSource,
  IterMessagesOptions,
  JsonlDestination,
  Lineage,
  ListSessionsRichOptions,
  MessagePage,
  MessagePageOptions,
  MessageRow,
  PortableSession,
  PostgresBackendInfo,
  PostgresStoreStats,
  PruneSessionsOptions,
  RichSessionRow,
  SearchHit,
  SearchIndexProgress,
  SearchIndexReport,
  SearchMessagesOptions,
  SessionExport,
  SessionPage,
  SessionPageOptions,
  SessionStore,
  SessionWithLastActive,
  UpdateTokenCountsInput,
  UsageStatsOptions,
  UsageStatsRow,
} from "@hermes/core";
import type { SessionRow } from "@hermes/schema";
import * as conversation from "./operations/conversation.js";
import * as listing from "./operations/listing.js";
import * as messages from "./operations/messages.js";
import * as retention from "./operations/retention.js";
import * as search from "./operations/search.js";
import * as maintenance from "./operations/search-index-maintenance.js";
import * as sessions from "./operations/sessions.js";
import * as titles from "./operations/titles.js";
import type { PgMigrationReport } from "./pg-schema.js";
import type { PgStoreContext } from "./pg-store-context.js";
import { PgStoreRuntime, type PgStoreRuntimeParts } from "./pg-store-runtime.js";
import * as portable from "./portable/store-methods.js";
import type { SealReport, SealStep } from "./search/seal-word-ranges.js";

/**
 * The session store on PostgreSQL: `SessionStore` of `@hermes/core`, with the same rows, values
 * and errors as the SQLite store. Open it with {@link openPostgresSessionStore}.
 *
 * Each method checks its arguments and runs one operation of `operations/` or `portable/`
 * (the same files as the SQLite store's) on a {@link PgStoreContext}: reads on the pool,
 * writes one transaction each through the store's FIFO writer.
 */
export class PostgresSessionStore implements SessionStore {
  readonly #runtime: PgStoreRuntime;
  readonly #migration: PgMigrationReport;
  readonly #backend: PostgresBackendInfo;
  readonly #ctx: PgStoreContext;

  /** @internal Use {@link openPostgresSessionStore}. */
  constructor(parts: PgStoreRuntimeParts, migration: PgMigrationReport, backend: PostgresBackendInfo) {
    this.#runtime = new PgStoreRuntime(parts);
    this.#ctx = this.#runtime.ctx;
    this.#migration = migration;
    this.#backend = backend;
  }

  /** What the store runs on: `kind: "postgres"`, the schema that holds its tables, the server's version. */
  get backend(): PostgresBackendInfo {
    return this.#backend;
  }

  /** What opening did to the schema. */
  get migration(): PgMigrationReport {
    return this.#migration;
  }

  /** Whether every write rejects (`readOnly: true`). */
  get readOnly(): boolean {
    return this.#runtime.readOnly;
  }

  /** Why writes are impossible, in words; `null` when the store writes. */
  get readOnlyReason(): string | null {
    return this.#runtime.readOnly ? "it was opened with readOnly: true" : null;
  }

  /**
   * The index method behind ranked search: `rum` reads the top hits of each sealed range off
   * its RUM index (the newest messages, the open range, off a GIN index); `gin` (RUM not
   * installed on the server) selects every match and sorts it (see `RUM_MISSING`).
   */
  get searchMethod(): "rum" | "gin" {
    return this.#ctx.searchIndex.rum ? "rum" : "gin";
  }

  // Sessions ------------------------------------------------------------------------------

  /** Creates a session; an existing id is left as it is (first write wins). Returns the id. */
  async createSession(input: CreateSessionInput): Promise<string> {
    return sessions.createSession(this.#ctx, input);
  }
  /** Creates the session if missing (`source` defaults to `unknown`); never overwrites. */
  async ensureSession(input: EnsureSessionInput): Promise<void> {
    return sessions.ensureSession(this.#ctx, input);
  }
  /** Marks a session ended; the first end wins. */
  async endSession(id: string, endReason: string): Promise<void> {
    return sessions.endSession(this.#ctx, id, endReason);
  }
  /** Clears `ended_at` and `end_reason`. */
  async reopenSession(id: string): Promise<void> {
    return sessions.reopenSession(this.#ctx, id);
  }
  /** Replaces the system prompt snapshot. */
  async updateSystemPrompt(id: string, systemPrompt: string): Promise<void> {
    return sessions.updateSystemPrompt(this.#ctx, id, systemPrompt);
  }
  /** Adds (or with `absolute`, sets) token, cost and API-call counters. */
  async updateTokenCounts(id: string, input: UpdateTokenCountsInput = {}): Promise<void> {
    return sessions.updateTokenCounts(this.#ctx, id, input);
  }
  /** Every column of one session, or `null`. */
  async getSession(id: string): Promise<SessionRow | null> {
    return sessions.getSession(this.#ctx, id);
  }
  /** An exact id, else the id that uniquely starts with `idOrPrefix`, else `null`. */
  async resolveSessionId(idOrPrefix: string): Promise<string | null> {
    return sessions.resolveSessionId(this.#ctx, idOrPrefix);
  }
  /** Number of sessions, of one source when given. */
  async sessionCount(o?: { source?: string }): Promise<number> {
    return sessions.sessionCount(this.#ctx, o);
  }
  /** Number of message rows, of one session when given. */
  async messageCount(o?: { sessionId?: string }): Promise<number> {
    return sessions.messageCount(this.#ctx, o);
  }

  // Listing and lineage -------------------------------------------------------------------

  /** Sessions with `last_active`, most recently used first. */
  async searchSessions(o?: {
    source?: string;
    limit?: number;
    offset?: number;
  }): Promise<SessionWithLastActive[]> {
    return listing.searchSessions(this.#ctx, o);
  }
  /** Sessions for a picker with `last_active` and `preview` (see `SessionStore` of `@hermes/core`). */
  async listSessionsRich(o?: ListSessionsRichOptions): Promise<RichSessionRow[]> {
    return listing.listSessionsRich(this.#ctx, o);
  }
  /** The latest session of `id`'s compression chain. */
  async getCompressionTip(id: string): Promise<string> {
    return listing.getCompressionTip(this.#ctx, id);
  }
  /** The session a resume of `id` should load (first descendant with messages). */
  async resolveResumeSessionId(id: string): Promise<string> {
    return listing.resolveResumeSessionId(this.#ctx, id);
  }

  // Titles ----------------------------------------------------------------------------------

  /** Sets (or with `null`/blank, clears) a title; `false` for an unknown session. */
  async setSessionTitle(id: string, title: string | null): Promise<boolean> {
    return titles.setSessionTitle(this.#ctx, id, title);
  }
  /** The title of a session; `null` when it has none or does not exist. */
  async getSessionTitle(id: string): Promise<string | null> {
    return titles.getSessionTitle(this.#ctx, id);
  }
  /** The session whose title is exactly `title`, or `null`. */
  async getSessionByTitle(title: string): Promise<SessionRow | null> {
    return titles.getSessionByTitle(this.#ctx, title);
  }
  /** Resolves a title to a session id, preferring the newest `<title> #n` continuation. */
  async resolveSessionByTitle(title: string): Promise<string | null> {
    return titles.resolveSessionByTitle(this.#ctx, title);
  }
  /** The next title of a lineage (`X` → `X #2`, `X #7` → `X #8`). */
  async getNextTitleInLineage(baseTitle: string): Promise<string> {
    return titles.getNextTitleInLineage(this.#ctx, baseTitle);
  }

  // Messages --------------------------------------------------------------------------------

  /** Appends a message and bumps the session's counters in one transaction; returns its id. */
  async appendMessage(m: AppendMessageInput): Promise<number> {
    return messages.appendMessage(this.#ctx, m);
  }
  /** Appends several messages all or none, in one transaction; returns their ids in order. */
  async appendMessages(batch: readonly AppendMessageInput[]): Promise<number[]> {
    return messages.appendMessages(this.#ctx, batch);
  }
  /** Every message of a session, ordered by (timestamp, id), with `tool_calls` parsed. */
  async getMessages(sessionId: string): Promise<MessageRow[]> {
    return messages.getMessages(this.#ctx, sessionId);
  }
  /** The conversation in the OpenAI chat shape, optionally with its ancestors. */
  async getMessagesAsConversation(
    sessionId: string,
    o?: { includeAncestors?: boolean },
  ): Promise<ConversationMessage[]> {
    return conversation.getMessagesAsConversation(this.#ctx, sessionId, o);
  }
  /** Deletes a session's messages and resets its message and tool-call counters. */
  async clearMessages(sessionId: string): Promise<void> {
    return messages.clearMessages(this.#ctx, sessionId);
  }

  // Search ----------------------------------------------------------------------------------

  /**
   * Full-text search with the SQLite store's syntax and rules: words through the `tsvector`
   * GIN index (ranked, `>>>`/`<<<` snippets), CJK through substring search on the pg_trgm
   * GIN index (newest first, 120-character excerpts).
   */
  async searchMessages(query: string, o?: SearchMessagesOptions): Promise<SearchHit[]> {
    return search.searchMessages(this.#ctx, query, o);
  }
  /** State of the search index: rows whose `search_vector` is missing count as damage. */
  async verifySearchIndex(): Promise<SearchIndexReport> {
    return maintenance.verifySearchIndex(this.#ctx);
  }
  /** Recomputes every message's search vector, in transactions of 1,000 messages. */
  async rebuildSearchIndex(o?: { onProgress?: (progress: SearchIndexProgress) => void }): Promise<void> {
    return maintenance.rebuildSearchIndex(this.#ctx, o);
  }
  /**
   * Seals the word index's open range now (PostgreSQL with RUM only; stores do it on their own
   * every `wordIndex.sealEvery` appends): its messages move into a sealed range with a RUM
   * index built concurrently (appends and searches go on), merged with the newest sealed
   * ranges while they are no larger. `force: false` seals only past the mark; `onStep` is
   * awaited after each step. `outcome` is `busy` when another store is sealing, `gin` on the
   * GIN layout.
   *
   * @example
   * const { outcome, range } = await store.sealSearchIndex(); // "sealed", { lo: 0, hi: 20000 }
   */
  async sealSearchIndex(o?: {
    force?: boolean;
    onStep?: (step: SealStep) => void | Promise<void>;
  }): Promise<SealReport> {
    if (this.#runtime.readOnly) throw this.#runtime.refusal();
    return maintenance.sealSearchIndex(this.#ctx, o);
  }
  /**
   * Bulk loads (PostgreSQL only): on an empty store drops the search indexes and returns
   * `true`, so that a large import writes no index per row; then {@link buildSearchIndexes}.
   */
  async deferSearchIndexes(): Promise<boolean> {
    return maintenance.deferSearchIndexes(this.#ctx);
  }
  /** Creates missing search indexes (after {@link deferSearchIndexes}) and analyzes. */
  async buildSearchIndexes(): Promise<void> {
    return maintenance.buildSearchIndexes(this.#ctx);
  }

  // Export, retention, metadata -----------------------------------------------------------

  /** A session with all its messages, or `null`. */
  async exportSession(id: string): Promise<SessionExport | null> {
    return retention.exportSession(this.#ctx, id);
  }
  /** Every session (or one source's) with its messages, most recently active first. */
  async exportAll(o?: {
    source?: string;
  }): Promise<Array<SessionWithLastActive & { messages: MessageRow[] }>> {
    return retention.exportAll(this.#ctx, o);
  }
  /** Deletes a session and its messages, orphaning its children; `false` when unknown. */
  async deleteSession(id: string, o?: { sessionsDir?: string }): Promise<boolean> {
    return retention.deleteSession(this.#ctx, id, o);
  }
  /** Deletes ended sessions older than `olderThanDays` (default 90); returns how many. */
  async pruneSessions(o?: PruneSessionsOptions): Promise<number> {
    return retention.pruneSessions(this.#ctx, o);
  }
  /** The value stored under `key` in `state_meta`, or `null`. */
  async getMeta(key: string): Promise<string | null> {
    return retention.getMeta(this.#ctx, key);
  }
  /** Stores `value` under `key` in `state_meta`. */
  async setMeta(key: string, value: string): Promise<void> {
    return retention.setMeta(this.#ctx, key, value);
  }
  /**
   * PostgreSQL's equivalent of SQLite's `VACUUM`: `VACUUM (ANALYZE)` of the store's tables,
   * which makes the space of deleted rows reusable and refreshes the planner's statistics
   * (it does not shrink the files; `VACUUM FULL` would lock the tables). Queued after the
   * store's earlier writes, outside a transaction.
   */
  async vacuum(): Promise<void> {
    return retention.vacuum(this.#ctx);
  }
  /**
   * Startup housekeeping: prune (and vacuum) at most once per `minIntervalHours`. Never throws,
   * except on a read-only store, which refuses it like every write (`STORE_READ_ONLY`).
   */
  maybeAutoPruneAndVacuum(o?: AutoPruneOptions): Promise<AutoPruneResult> {
    this.#runtime.check();
    if (this.#runtime.readOnly) return Promise.reject(this.#runtime.refusal());
    return retention.maybeAutoPruneAndVacuum(this.#ctx, o);
  }

  // Portability ---------------------------------------------------------------------------

  /** Every matching session with its messages, one at a time, from one snapshot. */
  exportStream(o?: ExportStreamOptions): AsyncIterable<PortableSession> {
    return portable.exportStream(this.#ctx, o);
  }
  /** Writes the JSONL interchange format (header, then one session per line). */
  async exportJsonl(destination: JsonlDestination, o?: ExportStreamOptions): Promise<ExportReport> {
    return portable.exportJsonl(this.#ctx, destination, o);
  }
  /** A Markdown rendering of a session, or `null` for an unknown session. */
  async exportSessionMarkdown(id: string): Promise<string | null> {
    return portable.exportSessionMarkdown(this.#ctx, id);
  }
  /** Imports sessions from a JSONL file or an iterable; idempotent, parents before children. */
  async importSessions(source: ImportSource, o?: ImportSessionsOptions): Promise<ImportReport> {
    return portable.importSessions(this.#ctx, source, o);
  }
  /** A session's messages page by page (cursor `afterId`), in conversation order. */
  iterMessages(sessionId: string, o?: IterMessagesOptions): AsyncIterable<MessageRow> {
    return portable.iterMessages(this.#ctx, sessionId, o);
  }
  /** The last messages of a session, bounded by count and tokens. */
  async getConversationWindow(sessionId: string, o?: ConversationWindowOptions): Promise<ConversationWindow> {
    return portable.getConversationWindow(this.#ctx, sessionId, o);
  }
  /** The conversation in the Anthropic Messages shape. */
  async getMessagesAsAnthropic(
    sessionId: string,
    o?: { includeAncestors?: boolean },
  ): Promise<AnthropicConversation> {
    return portable.getMessagesAsAnthropic(this.#ctx, sessionId, o);
  }
  /** Forks a session (messages up to `atMessageId`); returns the new row. */
  async forkSession(id: string, o?: ForkSessionOptions): Promise<SessionRow> {
    return portable.forkSession(this.#ctx, id, o);
  }
  /** Ancestors and descendants of a session with the kind of each link, or `null`. */
  async getLineage(id: string, o?: { maxDescendants?: number }): Promise<Lineage | null> {
    return portable.getLineage(this.#ctx, id, o);
  }
  /** A page of sessions, most recently active chain first, with filters and a cursor to the next page. */
  async listSessionPage(o?: SessionPageOptions): Promise<SessionPage> {
    return portable.listSessionPage(this.#ctx, o);
  }
  /** A page of a session's messages: the first or last, around a message, or before/after one. */
  async getMessagePage(sessionId: string, o?: MessagePageOptions): Promise<MessagePage> {
    return portable.getMessagePage(this.#ctx, sessionId, o);
  }
  /** Sessions, messages, tokens and cost grouped by source, model or UTC day. */
  async usageStats(o: UsageStatsOptions): Promise<UsageStatsRow[]> {
    return portable.usageStats(this.#ctx, o);
  }
  // Lifecycle -------------------------------------------------------------------------------

  /** Counters of the write path (`backend: "postgres"`; see {@link PgStoreRuntime.stats}). */
  stats(): PostgresStoreStats {
    return this.#runtime.stats();
  }

  /** Waits for queued writes and running reads, then closes the pool (when the store made it). */
  close(): Promise<void> {
    return this.#runtime.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
