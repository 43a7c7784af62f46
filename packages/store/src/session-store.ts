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
  PruneSessionsOptions,
  RichSessionRow,
  SearchHit,
  SearchIndexProgress,
  SearchIndexReport,
  SearchMessagesOptions,
  SearchSessionsOptions,
  SessionExport,
  SessionPage,
  SessionPageOptions,
  SessionRow,
  SessionStore as SessionStoreContract,
  SessionWithLastActive,
  SqliteBackendInfo,
  SqliteStoreStats,
  StoreChange,
  UpdateTokenCountsInput,
  UsageStatsOptions,
  UsageStatsRow,
  WatchChangesOptions,
} from "@hermes/core";
import { type ExportFilter, exportFilter, throwIfAborted } from "@hermes/core";
import type { MigrationReport } from "@hermes/schema";
import type { DatabaseConnection } from "./database-connection.js";
import type { FileProfile } from "./file-profile.js";
import {
  causeText,
  type ReadOnlyStoreState,
  readOnlyContext,
  type StoreAccess,
  storeAccess,
} from "./open-read-only-store.js";
import * as conversation from "./operations/conversation.js";
import * as listing from "./operations/listing.js";
import * as messages from "./operations/messages.js";
import * as retention from "./operations/retention.js";
import * as sessions from "./operations/sessions.js";
import * as titles from "./operations/titles.js";
import * as watch from "./operations/watch-changes.js";
import * as portable from "./portable/store-methods.js";
import type { ReadPool } from "./read-pool/read-pool.js";
import { withoutSignal } from "./read-pool/read-routing.js";
import { ReadRouter } from "./reads/read-router.js";
import type { SessionStoreParts } from "./session-store-parts.js";
import { CjkSideIndex } from "./side-index/cjk-side-index.js";
import type { StoreContext } from "./store-context.js";
import { StoreRuntime } from "./store-runtime.js";
import { WriteRouter } from "./write/write-router.js";
import type { WriterThread } from "./write/writer-thread.js";

/**
 * The session store on SQLite: sessions, messages, titles, lineage, search, export and retention
 * over one `state.db`, file-compatible with Hermes Agent. Open it with `openSessionStore`. It
 * implements the `SessionStore` interface of `@hermes/core` (documented there); `path`,
 * `migration`, `access` and `fileProfile` are its own.
 *
 * Every method is async. Writes go through one queue of `BEGIN IMMEDIATE … COMMIT` units that
 * wait for other processes' locks on timers, never in SQLite's blocking busy handler. Reads run
 * in the read pool's worker threads when the store has one (`readers`), else on this thread.
 */
export class SessionStore implements SessionStoreContract {
  readonly #conn: DatabaseConnection;
  readonly #migration: MigrationReport;
  readonly #backend: SqliteBackendInfo;
  readonly #readOnly: ReadOnlyStoreState | undefined;
  readonly #cjkIndex: CjkSideIndex;
  readonly #pool: ReadPool | undefined;
  readonly #reads: ReadRouter;
  readonly #writes: WriteRouter;
  readonly #runtime: StoreRuntime;

  /** @internal Use {@link openSessionStore}. */
  constructor(p: SessionStoreParts) {
    const { conn, writes, readOnly, pool } = p;
    this.#conn = conn;
    this.#backend = Object.freeze({ kind: "sqlite", path: conn.path, sqliteVersion: p.sqliteVersion });
    this.#migration = p.migration;
    this.#readOnly = readOnly;
    // With a writer thread, the index is built there; this side reports what that builder does.
    const builds = readOnly === undefined && p.writer === undefined;
    const builder = { state: () => this.#writes.thread?.cjk };
    // While this side's builder runs, the caller's thread never sleeps in SQLite's busy handler:
    // a write meeting the builder's lock waits on timers (the write queue's backoff) instead.
    const busyMs = conn.busyTimeoutMs;
    const onBuilding = (active: boolean) => conn.setBusyTimeout(active ? 0 : busyMs);
    this.#cjkIndex = new CjkSideIndex(() => conn, builds ? p.cjk : undefined, builder, onBuilding);
    this.#pool = pool;
    const ctx =
      readOnly === undefined
        ? { conn, writes, path: conn.path, now: p.clock, cjkIndex: this.#cjkIndex }
        : readOnlyContext(readOnly, writes, p.clock);
    this.#writes = new WriteRouter({
      ctx,
      use: (action) => this.#write(action),
      path: p.writePath,
      thread: p.writer,
      spawn: p.spawnWriter,
      readsInWorkers: () => pool?.available() === true,
      readOnly: readOnly !== undefined,
      cjkIndex: this.#cjkIndex,
    });
    const cjkIndex = this.#cjkIndex;
    this.#runtime = new StoreRuntime({ conn, writes: this.#writes, pool, cjkIndex, readOnly });
    const noteError = (error: unknown) => this.#writes.noteError(error);
    this.#reads = new ReadRouter({ ctx, noteError, readOnly, pool, closed: () => this.#runtime.closed });
    p.writePath?.shared?.register("appendMessage", messages.sharedAppends(ctx));
    this.#cjkIndex.opened();
  }

  /** `{ kind: "sqlite", path, sqliteVersion }`. */
  get backend(): SqliteBackendInfo {
    return this.#backend;
  }

  /** The database file this store writes (also `backend.path`). */
  get path(): string {
    return this.#conn.path;
  }

  /** What opening did to the file (steps applied, warnings such as duplicate titles). */
  get migration(): MigrationReport {
    return this.#migration;
  }

  /** Whether every write rejects (see `readOnly` of `OpenSessionStoreOptions`). */
  get readOnly(): boolean {
    return this.#readOnly !== undefined;
  }

  /** Why writes are impossible, in words (e.g. `the folder … is not writable`); `null` when writable. */
  get readOnlyReason(): string | null {
    return this.#readOnly === undefined ? null : causeText(this.#readOnly.cause);
  }

  /** How the store reaches its file: mode, why it is read-only, schema version, journal mode. */
  get access(): StoreAccess {
    return storeAccess(this.#readOnly);
  }

  /** What a read-only store found in its file (columns, tables, newer agents' features); `null` when writable. */
  get fileProfile(): FileProfile | null {
    return this.#readOnly?.file.profile ?? null;
  }

  /** The context for a write, or the read-only refusal (before any validation or effect). */
  #write(action: string): StoreContext {
    const ctx = this.#reads.use();
    if (this.#readOnly !== undefined) throw this.#readOnly.refusal(action);
    return ctx;
  }

  /** @internal The read pool (`undefined` with `readers: 0` or read-only); tests warm it up. */
  get readPool(): ReadPool | undefined {
    return this.#pool;
  }

  /** @internal The writer thread (`undefined` when writes run on this thread); tests. */
  get writerThread(): WriterThread | undefined {
    return this.#writes.thread;
  }

  // Sessions ------------------------------------------------------------------------------

  /** Creates a session; an existing id is left as it is (first write wins). Returns the id. */
  async createSession(s: CreateSessionInput): Promise<string> {
    return this.#writes.call("createSession", [s]);
  }
  /** Creates the session if missing (`source` defaults to `unknown`); never overwrites. */
  async ensureSession(s: EnsureSessionInput): Promise<void> {
    return this.#writes.call("ensureSession", [s]);
  }
  /** Marks a session ended; the first end wins. */
  async endSession(id: string, endReason: string): Promise<void> {
    return this.#writes.call("endSession", [id, endReason]);
  }
  /** Clears `ended_at` and `end_reason`. */
  async reopenSession(id: string): Promise<void> {
    return this.#writes.call("reopenSession", [id]);
  }
  async updateSystemPrompt(id: string, systemPrompt: string): Promise<void> {
    return this.#writes.call("updateSystemPrompt", [id, systemPrompt]);
  }
  /** Adds (or with `absolute`, sets) token, cost and API-call counters. */
  async updateTokenCounts(id: string, u: UpdateTokenCountsInput = {}): Promise<void> {
    return this.#writes.call("updateTokenCounts", [id, u]);
  }
  async getSession(id: string): Promise<SessionRow | null> {
    return this.#reads.run((ctx) => sessions.getSession(ctx, id), "getSession", [id]);
  }
  /** An exact id, else the id that uniquely starts with `idOrPrefix`, else `null`. */
  async resolveSessionId(idOrPrefix: string): Promise<string | null> {
    return this.#reads.run((ctx) => sessions.resolveSessionId(ctx, idOrPrefix), "resolveSessionId", [
      idOrPrefix,
    ]);
  }
  async sessionCount(o?: { source?: string }): Promise<number> {
    return this.#reads.run((ctx) => sessions.sessionCount(ctx, o), "sessionCount", [o]);
  }
  async messageCount(o?: { sessionId?: string }): Promise<number> {
    return this.#reads.run((ctx) => sessions.messageCount(ctx, o), "messageCount", [o]);
  }

  // Listing and lineage -------------------------------------------------------------------

  /**
   * Sessions, most recently active first. On a newer agent's file, archived and hidden sessions
   * are left out unless `includeArchived` / `includeHidden`.
   */
  async searchSessions(o?: SearchSessionsOptions): Promise<SessionWithLastActive[]> {
    return this.#reads.run((ctx) => listing.searchSessions(ctx, o), "searchSessions", [o]);
  }
  /**
   * Sessions for a picker, newest first, with `last_active` and `preview`. On a newer agent's
   * file, archived and hidden sessions are left out unless `includeArchived` / `includeHidden`.
   */
  async listSessionsRich(o?: ListSessionsRichOptions): Promise<RichSessionRow[]> {
    return this.#reads.run((ctx) => listing.listSessionsRich(ctx, o), "listSessionsRich", [o]);
  }
  async getCompressionTip(id: string): Promise<string> {
    return this.#reads.run((ctx) => listing.getCompressionTip(ctx, id), "getCompressionTip", [id]);
  }
  async resolveResumeSessionId(id: string): Promise<string> {
    return this.#reads.run((ctx) => listing.resolveResumeSessionId(ctx, id), "resolveResumeSessionId", [id]);
  }

  // Titles ----------------------------------------------------------------------------------

  /** Sets (or with `null`/blank, clears) a title; `false` for an unknown session. */
  async setSessionTitle(id: string, title: string | null): Promise<boolean> {
    return this.#writes.call("setSessionTitle", [id, title]);
  }
  async getSessionTitle(id: string): Promise<string | null> {
    return this.#reads.run((ctx) => titles.getSessionTitle(ctx, id), "getSessionTitle", [id]);
  }
  async getSessionByTitle(title: string): Promise<SessionRow | null> {
    return this.#reads.run((ctx) => titles.getSessionByTitle(ctx, title), "getSessionByTitle", [title]);
  }
  async resolveSessionByTitle(title: string): Promise<string | null> {
    return this.#reads.run((ctx) => titles.resolveSessionByTitle(ctx, title), "resolveSessionByTitle", [
      title,
    ]);
  }
  async getNextTitleInLineage(baseTitle: string): Promise<string> {
    return this.#reads.run((ctx) => titles.getNextTitleInLineage(ctx, baseTitle), "getNextTitleInLineage", [
      baseTitle,
    ]);
  }

  // Messages --------------------------------------------------------------------------------

  /** Appends a message and bumps the session's counters in one transaction; returns its id. */
  async appendMessage(m: AppendMessageInput): Promise<number> {
    return this.#writes.call("appendMessage", [m]);
  }
  /**
   * Appends several messages (e.g. one agent turn) all or none, in one transaction; returns
   * their row ids in order. Any invalid message or unknown session writes nothing.
   */
  async appendMessages(batch: readonly AppendMessageInput[]): Promise<number[]> {
    return this.#writes.call("appendMessages", [batch]);
  }
  async getMessages(sessionId: string): Promise<MessageRow[]> {
    return this.#reads.run((ctx) => messages.getMessages(ctx, sessionId), "getMessages", [sessionId]);
  }
  async getMessagesAsConversation(
    sessionId: string,
    o?: { includeAncestors?: boolean },
  ): Promise<ConversationMessage[]> {
    return this.#reads.run(
      (ctx) => conversation.getMessagesAsConversation(ctx, sessionId, o),
      "getMessagesAsConversation",
      [sessionId, o],
    );
  }
  async clearMessages(sessionId: string): Promise<void> {
    return this.#writes.call("clearMessages", [sessionId]);
  }

  // Search ----------------------------------------------------------------------------------

  /**
   * Full-text search ([search_messages]): ranked FTS5 for words, substring search for CJK
   * (one- and two-character terms from an index of ours). See `@hermes/search`.
   */
  async searchMessages(query: string, o?: SearchMessagesOptions): Promise<SearchHit[]> {
    const { signal, rest } = withoutSignal(o);
    // Short CJK terms bring their index up to date first (a write): the write router decides
    // where (see WriteRouter.search).
    return this.#writes.search(query, rest, signal, (inWorker) =>
      this.#reads.search(query, rest, signal, inWorker),
    );
  }

  /** State of every search index: the reference's FTS5 tables and the short-CJK index. */
  async verifySearchIndex(): Promise<SearchIndexReport> {
    return this.#writes.verifySearchIndex(() => this.#reads.fresh());
  }
  /** Rebuilds every search index from `messages` (FTS5 `rebuild` holds the write lock per table). */
  async rebuildSearchIndex(o?: { onProgress?: (progress: SearchIndexProgress) => void }): Promise<void> {
    return this.#writes.rebuildSearchIndex(o);
  }

  // Export, retention, metadata -----------------------------------------------------------

  async exportSession(id: string): Promise<SessionExport | null> {
    return this.#reads.run((ctx) => retention.exportSession(ctx, id), "exportSession", [id]);
  }
  async exportAll(o?: {
    source?: string;
  }): Promise<Array<SessionWithLastActive & { messages: MessageRow[] }>> {
    return this.#reads.run((ctx) => retention.exportAll(ctx, o), "exportAll", [o]);
  }
  async deleteSession(id: string, o?: { sessionsDir?: string }): Promise<boolean> {
    return this.#writes.deleteSession(id, o);
  }
  async pruneSessions(o?: PruneSessionsOptions): Promise<number> {
    return this.#writes.pruneSessions(o);
  }
  async getMeta(key: string): Promise<string | null> {
    return this.#reads.run((ctx) => retention.getMeta(ctx, key), "getMeta", [key]);
  }
  async setMeta(key: string, value: string): Promise<void> {
    return this.#writes.call("setMeta", [key, value]);
  }
  async vacuum(): Promise<void> {
    return this.#writes.call("vacuum", []);
  }
  async maybeAutoPruneAndVacuum(o?: AutoPruneOptions): Promise<AutoPruneResult> {
    return this.#writes.maybeAutoPruneAndVacuum(o);
  }

  // Portability: streaming export and import, bounded reads, forks, lineage, usage ---------

  /**
   * Every matching session with its messages (rows as stored, `tool_calls` as JSON text), one
   * session at a time, from one consistent snapshot, paging through the database.
   */
  exportStream(o?: ExportStreamOptions): AsyncIterable<PortableSession> {
    const ctx = this.#reads.fresh();
    const { signal, rest } = withoutSignal(o);
    exportFilter(rest);
    return this.#reads.stream("exportStream", [rest], signal, () => portable.exportStream(ctx, rest));
  }
  /** Writes the JSONL interchange format (header line, then one session per line) in constant memory. */
  async exportJsonl(destination: JsonlDestination, o?: ExportStreamOptions): Promise<ExportReport> {
    const ctx = this.#reads.fresh();
    const { signal, rest } = withoutSignal(o);
    throwIfAborted(signal);
    const events = this.#reads.streamSource("exportEvents", [rest], signal, (filter: ExportFilter) =>
      portable.exportEvents(ctx, filter),
    );
    return portable.exportJsonl(ctx, destination, rest, events);
  }
  /** A Markdown rendering of a session, or `null` for an unknown session. */
  async exportSessionMarkdown(id: string): Promise<string | null> {
    return this.#reads.runAsync("exportSessionMarkdown", [id], (ctx) =>
      portable.exportSessionMarkdown(ctx, id),
    );
  }
  /** Imports sessions from a JSONL file or an iterable; idempotent, parents before children. */
  async importSessions(source: ImportSource, o?: ImportSessionsOptions): Promise<ImportReport> {
    return this.#writes.importSessions(source, o);
  }
  /** A session's messages page by page (cursor `afterId`), in conversation order. */
  iterMessages(sessionId: string, o?: IterMessagesOptions): AsyncIterable<MessageRow> {
    const ctx = this.#reads.fresh();
    const { signal, rest } = withoutSignal(o);
    // Checked here, in the caller's stack, as in-thread (a worker would only say so at the first step).
    const inThread = portable.iterMessages(ctx, sessionId, rest);
    return this.#reads.stream("iterMessages", [sessionId, rest], signal, () => inThread);
  }
  /** The last messages of a session, bounded by count and tokens, without reading the rest. */
  async getConversationWindow(sessionId: string, o?: ConversationWindowOptions): Promise<ConversationWindow> {
    return this.#reads.run(
      (ctx) => portable.getConversationWindow(ctx, sessionId, o),
      "getConversationWindow",
      [sessionId, o],
    );
  }
  /** The conversation in the Anthropic Messages shape (`system` apart, tool blocks). */
  async getMessagesAsAnthropic(
    sessionId: string,
    o?: { includeAncestors?: boolean },
  ): Promise<AnthropicConversation> {
    return this.#reads.run(
      (ctx) => portable.getMessagesAsAnthropic(ctx, sessionId, o),
      "getMessagesAsAnthropic",
      [sessionId, o],
    );
  }
  /** Forks a session inside the database (messages up to `atMessageId`); returns the new row. */
  async forkSession(id: string, o?: ForkSessionOptions): Promise<SessionRow> {
    return this.#writes.call("forkSession", [id, o]);
  }
  /** Ancestors and descendants of a session with the kind of each link, or `null`. */
  async getLineage(id: string, o?: { maxDescendants?: number }): Promise<Lineage | null> {
    return this.#reads.run((ctx) => portable.getLineage(ctx, id, o), "getLineage", [id, o]);
  }
  /** A page of sessions, most recently active chain first, with filters and a cursor to the next page. */
  async listSessionPage(o?: SessionPageOptions): Promise<SessionPage> {
    return this.#reads.run((ctx) => portable.listSessionPage(ctx, o), "listSessionPage", [o]);
  }
  /** A page of a session's messages: the first or last, around a message, or before/after one. */
  async getMessagePage(sessionId: string, o?: MessagePageOptions): Promise<MessagePage> {
    return this.#reads.run((ctx) => portable.getMessagePage(ctx, sessionId, o), "getMessagePage", [
      sessionId,
      o,
    ]);
  }
  /** Sessions, messages, tokens and cost grouped by source, model or day. */
  async usageStats(o: UsageStatsOptions): Promise<UsageStatsRow[]> {
    const { signal, rest } = withoutSignal(o);
    return this.#reads.run(
      (ctx) => portable.usageStats(ctx, rest as UsageStatsOptions),
      "usageStats",
      [rest],
      signal,
    );
  }

  // Change feed ------------------------------------------------------------------------------

  /**
   * What other processes (the agent) and this store write, as it happens: every `intervalMs`
   * (default 250) a cheap check (`PRAGMA data_version`), then the sessions and messages added
   * since the cursor (a rowid range). Ends when `signal` aborts.
   *
   * @example
   * const ac = new AbortController();
   * for await (const change of store.watchChanges({ signal: ac.signal, includeMessages: true })) {
   *   for (const m of change.messages ?? []) console.log(m.session_id, m.role, m.content);
   * }
   */
  watchChanges(o?: WatchChangesOptions): AsyncIterable<StoreChange> {
    const ctx = this.#reads.use();
    return this.#reads.guard(watch.watchChanges(ctx, () => this.#runtime.closed, o));
  }

  // Lifecycle -------------------------------------------------------------------------------

  /** Counters of the write path, the WAL size and the side indexes' state (`backend: "sqlite"`). */
  stats(): SqliteStoreStats {
    return this.#runtime.stats();
  }

  /** Waits for queued writes, checkpoints best-effort and closes the connection. Idempotent. */
  close(): Promise<void> {
    return this.#runtime.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
