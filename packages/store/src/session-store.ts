import { statSync } from "node:fs";
import {
  composeChain,
  coreSchema,
  type MigrationProgress,
  type MigrationReport,
  runMigrations,
} from "@hermes/schema";
import { searchSchema } from "@hermes/search";
import { DatabaseConnection } from "./database-connection.js";
import {
  createDatabaseAtomically,
  isSupportedSqliteVersion,
  MIN_SQLITE_VERSION,
  preflightDatabaseFile,
  verifyOpenedDatabase,
} from "./database-file.js";
import { HermesStoreError, InvalidArgumentError, StoreClosedError } from "./errors.js";
import { ensureParentDirectory, refuseSymlinks, tightenPermissions } from "./file-security.js";
import { HandoffQueue } from "./handoff-queue.js";
import * as conversation from "./operations/conversation.js";
import * as listing from "./operations/listing.js";
import * as messages from "./operations/messages.js";
import * as retention from "./operations/retention.js";
import * as search from "./operations/search.js";
import * as sessions from "./operations/sessions.js";
import * as titles from "./operations/titles.js";
import type { AnthropicConversation } from "./portable/anthropic-format.js";
import type { ConversationWindow, ConversationWindowOptions } from "./portable/conversation-window.js";
import type { ExportReport, JsonlDestination } from "./portable/export-jsonl.js";
import type { ExportStreamOptions } from "./portable/export-stream.js";
import type { ForkSessionOptions } from "./portable/fork-session.js";
import type { ImportReport, ImportSessionsOptions, ImportSource } from "./portable/import-sessions.js";
import type { IterMessagesOptions } from "./portable/iter-messages.js";
import type { PortableSession } from "./portable/jsonl-format.js";
import type { Lineage } from "./portable/lineage.js";
import type { MessagePage, MessagePageOptions } from "./portable/message-page.js";
import type { SessionPage, SessionPageOptions } from "./portable/session-page.js";
import * as portable from "./portable/store-methods.js";
import type { UsageStatsOptions, UsageStatsRow } from "./portable/usage-stats.js";
import { referenceSearchIndexRepair } from "./search-index-repair.js";
import { referenceSearchMergePacing } from "./search-merge-pacing.js";
import { SharedCommits } from "./shared-commits.js";
import { isBusyError, mapSqliteError } from "./sqlite-errors.js";
import { resolveStatePath } from "./state-path.js";
import type { StoreContext } from "./store-context.js";
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
  SessionExport,
  SessionRow,
  SessionWithLastActive,
  UpdateTokenCountsInput,
} from "./types.js";
import { DEFAULT_WRITE_POLICY, WriteQueue, type WriteStats } from "./write-queue.js";

/** Options of {@link openSessionStore}. */
export interface OpenSessionStoreOptions {
  /** Database file; default `resolveStatePath()`. The parent directory is created (0700). */
  path?: string;
  /** Total patience of one write under contention, in ms (default 30 000), then `STORE_BUSY`. */
  writeDeadlineMs?: number;
  /**
   * SQLite's own busy handler, in ms (default 5). Kept short because better-sqlite3 waits
   * synchronously, freezing the event loop; longer waits happen between attempts, on timers.
   */
  busyTimeoutMs?: number;
  /** Durability (default `FULL`, as the reference). `NORMAL` may lose the last commits on power loss. */
  synchronous?: "OFF" | "NORMAL" | "FULL" | "EXTRA";
  /**
   * PASSIVE checkpoint after this many committed write transactions (default 50, as the
   * reference, where each write is one transaction; a group commit counts once).
   */
  checkpointEvery?: number;
  /** `journal_size_limit` in bytes (default 16 MiB): the WAL is truncated to this after a reset. */
  journalSizeLimit?: number;
  /**
   * Group commit: the most writes of this process committed together in one transaction
   * (default 64). Writes that arrive while a transaction commits share the next one, each in its
   * own savepoint; `1` gives one transaction per write.
   */
  maxGroupSize?: number;
  /**
   * WAL size in bytes (default 32 MiB) above which checkpoints escalate from PASSIVE to TRUNCATE,
   * holding this process's writes back briefly so readers with old snapshots let go of the WAL.
   */
  walMaxBytes?: number;
  /**
   * Writers of several processes take turns at the write lock in arrival order (default
   * `true`): a small queue file in `<path>-writers/` records who waits, and each commit wakes the
   * oldest waiter. `false`: every write races for the lock on its own timers (the last process
   * to commit then tends to win again, and the others wait longer).
   */
  fairWrites?: boolean;
  /**
   * With `fairWrites`, appends that wait for the lock are posted for the process holding it,
   * which commits them in its own transaction with one WAL sync for all (default `true`): group
   * commit across processes. Each append is applied once, in call order per process; a receipt
   * in the table `hermes_write_receipts`, written in the same transaction, tells its owner.
   * `false`: each process commits its own writes.
   */
  shareCommits?: boolean;
  /** Progress of a long upgrade (an old file's search index backfill). */
  onMigrationProgress?: (progress: MigrationProgress) => void;
  /**
   * How long opening waits, in ms, while another process upgrades the same old file
   * (default 600 000: re-indexing a million messages takes minutes), then `STORE_BUSY`.
   */
  migrationDeadlineMs?: number;
  /**
   * Open even when the SQLite linked into better-sqlite3 is older than 3.51.3 (which has a
   * WAL-reset bug that can corrupt a database written by several processes). Default `false`:
   * such a SQLite is refused with `UNSUPPORTED_SQLITE`.
   */
  allowUnsupportedSqlite?: boolean;
  /** Clock in Unix epoch seconds; for tests. */
  clock?: () => number;
}

const MIGRATION_CHAIN = composeChain(coreSchema, searchSchema);
const DEFAULT_MIGRATION_DEADLINE_MS = 600_000;

/** Statistics of one store, for monitoring. */
export interface StoreStats extends WriteStats {
  /** Current size of the `-wal` file, in bytes. */
  walBytes: number;
}

/**
 * The session store: sessions, messages, titles, lineage, search, export and retention over
 * one `state.db`, file-compatible with Hermes Agent. Open it with {@link openSessionStore}.
 *
 * Every method is async. Writes go through one queue of `BEGIN IMMEDIATE … COMMIT` units that
 * wait for other processes' locks on timers, never in SQLite's blocking busy handler.
 */
export class SessionStore {
  readonly #conn: DatabaseConnection;
  readonly #writes: WriteQueue;
  readonly #turns: HandoffQueue | undefined;
  readonly #ctx: StoreContext;
  readonly #migration: MigrationReport;
  #closed = false;
  #closing: Promise<void> | undefined;

  /** @internal Use {@link openSessionStore}. */
  constructor(
    conn: DatabaseConnection,
    writes: WriteQueue,
    migration: MigrationReport,
    clock: () => number,
    turns?: HandoffQueue,
    shared?: SharedCommits,
  ) {
    this.#conn = conn;
    this.#turns = turns;
    this.#writes = writes;
    this.#migration = migration;
    this.#ctx = { conn, writes, path: conn.path, now: clock };
    shared?.register("appendMessage", messages.sharedAppends(this.#ctx));
  }

  /** The database file this store writes. */
  get path(): string {
    return this.#conn.path;
  }

  /** What opening did to the file (steps applied, warnings such as duplicate titles). */
  get migration(): MigrationReport {
    return this.#migration;
  }

  #use(): StoreContext {
    if (this.#closed) throw new StoreClosedError();
    return this.#ctx;
  }

  async #read<T>(fn: (ctx: StoreContext) => T): Promise<T> {
    const ctx = this.#use();
    try {
      return fn(ctx);
    } catch (error) {
      // A damaged file seen by a read stops every later write and checkpoint of this store.
      this.#writes.noteError(error);
      throw mapSqliteError(error, ctx.path);
    }
  }

  // Sessions ------------------------------------------------------------------------------

  /** Creates a session; an existing id is left as it is (first write wins). Returns the id. */
  async createSession(s: CreateSessionInput): Promise<string> {
    return sessions.createSession(this.#use(), s);
  }
  /** Creates the session if missing (`source` defaults to `unknown`); never overwrites. */
  async ensureSession(s: EnsureSessionInput): Promise<void> {
    return sessions.ensureSession(this.#use(), s);
  }
  /** Marks a session ended; the first end wins. */
  async endSession(id: string, endReason: string): Promise<void> {
    return sessions.endSession(this.#use(), id, endReason);
  }
  /** Clears `ended_at` and `end_reason`. */
  async reopenSession(id: string): Promise<void> {
    return sessions.reopenSession(this.#use(), id);
  }
  async updateSystemPrompt(id: string, systemPrompt: string): Promise<void> {
    return sessions.updateSystemPrompt(this.#use(), id, systemPrompt);
  }
  /** Adds (or with `absolute`, sets) token, cost and API-call counters. */
  async updateTokenCounts(id: string, u: UpdateTokenCountsInput = {}): Promise<void> {
    return sessions.updateTokenCounts(this.#use(), id, u);
  }
  async getSession(id: string): Promise<SessionRow | null> {
    return this.#read((ctx) => sessions.getSession(ctx, id));
  }
  /** An exact id, else the id that uniquely starts with `idOrPrefix`, else `null`. */
  async resolveSessionId(idOrPrefix: string): Promise<string | null> {
    return this.#read((ctx) => sessions.resolveSessionId(ctx, idOrPrefix));
  }
  async sessionCount(o?: { source?: string }): Promise<number> {
    return this.#read((ctx) => sessions.sessionCount(ctx, o));
  }
  async messageCount(o?: { sessionId?: string }): Promise<number> {
    return this.#read((ctx) => sessions.messageCount(ctx, o));
  }

  // Listing and lineage -------------------------------------------------------------------

  async searchSessions(o?: {
    source?: string;
    limit?: number;
    offset?: number;
  }): Promise<SessionWithLastActive[]> {
    return this.#read((ctx) => listing.searchSessions(ctx, o));
  }
  async listSessionsRich(o?: ListSessionsRichOptions): Promise<RichSessionRow[]> {
    return this.#read((ctx) => listing.listSessionsRich(ctx, o));
  }
  async getCompressionTip(id: string): Promise<string> {
    return this.#read((ctx) => listing.getCompressionTip(ctx, id));
  }
  async resolveResumeSessionId(id: string): Promise<string> {
    return this.#read((ctx) => listing.resolveResumeSessionId(ctx, id));
  }

  // Titles ----------------------------------------------------------------------------------

  /** Sets (or with `null`/blank, clears) a title; `false` for an unknown session. */
  async setSessionTitle(id: string, title: string | null): Promise<boolean> {
    return titles.setSessionTitle(this.#use(), id, title);
  }
  async getSessionTitle(id: string): Promise<string | null> {
    return this.#read((ctx) => titles.getSessionTitle(ctx, id));
  }
  async getSessionByTitle(title: string): Promise<SessionRow | null> {
    return this.#read((ctx) => titles.getSessionByTitle(ctx, title));
  }
  async resolveSessionByTitle(title: string): Promise<string | null> {
    return this.#read((ctx) => titles.resolveSessionByTitle(ctx, title));
  }
  async getNextTitleInLineage(baseTitle: string): Promise<string> {
    return this.#read((ctx) => titles.getNextTitleInLineage(ctx, baseTitle));
  }

  // Messages --------------------------------------------------------------------------------

  /** Appends a message and bumps the session's counters in one transaction; returns its id. */
  async appendMessage(m: AppendMessageInput): Promise<number> {
    return messages.appendMessage(this.#use(), m);
  }
  /**
   * Appends several messages (e.g. one agent turn) all or none, in one transaction; returns
   * their row ids in order. Any invalid message or unknown session writes nothing.
   */
  async appendMessages(batch: readonly AppendMessageInput[]): Promise<number[]> {
    return messages.appendMessages(this.#use(), batch);
  }
  async getMessages(sessionId: string): Promise<MessageRow[]> {
    return this.#read((ctx) => messages.getMessages(ctx, sessionId));
  }
  async getMessagesAsConversation(
    sessionId: string,
    o?: { includeAncestors?: boolean },
  ): Promise<ConversationMessage[]> {
    return this.#read((ctx) => conversation.getMessagesAsConversation(ctx, sessionId, o));
  }
  async clearMessages(sessionId: string): Promise<void> {
    return messages.clearMessages(this.#use(), sessionId);
  }

  // Search ----------------------------------------------------------------------------------

  /**
   * Full-text search ([search_messages]): ranked FTS5 for words, substring search for CJK
   * (one- and two-character terms from an index of ours). See `@hermes/search`.
   */
  async searchMessages(query: string, o?: SearchMessagesOptions): Promise<SearchHit[]> {
    try {
      return await search.searchMessages(this.#use(), query, o);
    } catch (error) {
      this.#writes.noteError(error);
      throw error;
    }
  }
  /** State of every search index: the reference's FTS5 tables and the short-CJK index. */
  async verifySearchIndex(): Promise<import("@hermes/search").SearchIndexReport> {
    return search.verifySearchIndex(this.#use());
  }
  /** Rebuilds every search index from `messages` (FTS5 `rebuild` holds the write lock per table). */
  async rebuildSearchIndex(o?: {
    onProgress?: (progress: import("@hermes/search").SearchIndexProgress) => void;
  }): Promise<void> {
    return search.rebuildSearchIndex(this.#use(), o);
  }

  // Export, retention, metadata -----------------------------------------------------------

  async exportSession(id: string): Promise<SessionExport | null> {
    return this.#read((ctx) => retention.exportSession(ctx, id));
  }
  async exportAll(o?: {
    source?: string;
  }): Promise<Array<SessionWithLastActive & { messages: MessageRow[] }>> {
    return this.#read((ctx) => retention.exportAll(ctx, o));
  }
  async deleteSession(id: string, o?: { sessionsDir?: string }): Promise<boolean> {
    return retention.deleteSession(this.#use(), id, o);
  }
  async pruneSessions(o?: {
    olderThanDays?: number;
    source?: string;
    sessionsDir?: string;
  }): Promise<number> {
    return retention.pruneSessions(this.#use(), o);
  }
  async getMeta(key: string): Promise<string | null> {
    return this.#read((ctx) => retention.getMeta(ctx, key));
  }
  async setMeta(key: string, value: string): Promise<void> {
    return retention.setMeta(this.#use(), key, value);
  }
  async vacuum(): Promise<void> {
    return retention.vacuum(this.#use());
  }
  async maybeAutoPruneAndVacuum(o?: AutoPruneOptions): Promise<AutoPruneResult> {
    return retention.maybeAutoPruneAndVacuum(this.#use(), o);
  }

  // Portability: streaming export and import, bounded reads, forks, lineage, usage ---------

  /**
   * Every matching session with its messages (rows as stored, `tool_calls` as JSON text), one
   * session at a time, from one consistent snapshot, paging through the database.
   */
  exportStream(o?: ExportStreamOptions): AsyncIterable<PortableSession> {
    const ctx = this.#use();
    portable.exportFilter(o);
    return this.#guard(portable.exportStream(ctx, o));
  }
  /** Writes the JSONL interchange format (header line, then one session per line) in constant memory. */
  async exportJsonl(destination: JsonlDestination, o?: ExportStreamOptions): Promise<ExportReport> {
    return portable.exportJsonl(this.#use(), destination, o);
  }
  /** A Markdown rendering of a session, or `null` for an unknown session. */
  async exportSessionMarkdown(id: string): Promise<string | null> {
    return portable.exportSessionMarkdown(this.#use(), id);
  }
  /** Imports sessions from a JSONL file or an iterable; idempotent, parents before children. */
  async importSessions(source: ImportSource, o?: ImportSessionsOptions): Promise<ImportReport> {
    return portable.importSessions(this.#use(), source, o);
  }
  /** A session's messages page by page (cursor `afterId`), in conversation order. */
  iterMessages(sessionId: string, o?: IterMessagesOptions): AsyncIterable<MessageRow> {
    return this.#guard(portable.iterMessages(this.#use(), sessionId, o));
  }
  /** The last messages of a session, bounded by count and tokens, without reading the rest. */
  async getConversationWindow(sessionId: string, o?: ConversationWindowOptions): Promise<ConversationWindow> {
    return this.#read((ctx) => portable.getConversationWindow(ctx, sessionId, o));
  }
  /** The conversation in the Anthropic Messages shape (`system` apart, tool blocks). */
  async getMessagesAsAnthropic(
    sessionId: string,
    o?: { includeAncestors?: boolean },
  ): Promise<AnthropicConversation> {
    return this.#read((ctx) => portable.getMessagesAsAnthropic(ctx, sessionId, o));
  }
  /** Forks a session inside the database (messages up to `atMessageId`); returns the new row. */
  async forkSession(id: string, o?: ForkSessionOptions): Promise<SessionRow> {
    return portable.forkSession(this.#use(), id, o);
  }
  /** Ancestors and descendants of a session with the kind of each link, or `null`. */
  async getLineage(id: string, o?: { maxDescendants?: number }): Promise<Lineage | null> {
    return this.#read((ctx) => portable.getLineage(ctx, id, o));
  }
  /** A page of sessions, most recently active chain first, with filters and a cursor to the next page. */
  async listSessionPage(o?: SessionPageOptions): Promise<SessionPage> {
    return this.#read((ctx) => portable.listSessionPage(ctx, o));
  }
  /** A page of a session's messages: the first or last, around a message, or before/after one. */
  async getMessagePage(sessionId: string, o?: MessagePageOptions): Promise<MessagePage> {
    return this.#read((ctx) => portable.getMessagePage(ctx, sessionId, o));
  }
  /** Sessions, messages, tokens and cost grouped by source, model or day. */
  async usageStats(o: UsageStatsOptions): Promise<UsageStatsRow[]> {
    return this.#read((ctx) => portable.usageStats(ctx, o));
  }

  /** Turns a failure after `close()` into `STORE_CLOSED` for long-lived iterables. */
  async *#guard<T>(source: AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
    try {
      for await (const item of source) {
        yield item;
        if (this.#closed) throw new StoreClosedError();
      }
    } catch (error) {
      if (this.#closed) throw error instanceof StoreClosedError ? error : new StoreClosedError();
      this.#writes.noteError(error);
      throw error;
    }
  }

  // Lifecycle -------------------------------------------------------------------------------

  /** Counters of the write path and the current WAL size. */
  stats(): StoreStats {
    const walBytes = this.#closed ? 0 : walSize(this.#conn.path);
    return { ...this.#writes.stats, walBytes };
  }

  /**
   * Waits for queued writes, checkpoints best-effort and closes the connection. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      await this.#writes.whenIdle();
      // Best effort: TRUNCATE waits only the short busy timeout for readers, then degrades to
      // copying what it can, like PASSIVE (as the reference's close, never an error).
      // Skipped once the file was found damaged (the queue refuses to checkpoint then).
      this.#writes.checkpoint("TRUNCATE");
      this.#turns?.close();
      this.#conn.close();
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** An optional positive integer option, or `INVALID_ARGUMENT`. */
function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new InvalidArgumentError(name, `${name} must be a positive integer`);
  }
  return value;
}

function walSize(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Opens (creating when missing) a `state.db` and brings it to schema v11.
 *
 * @example
 * const store = await openSessionStore();              // ~/.hermes/state.db
 * const id = await store.createSession({ id: "s1", source: "cli" });
 * await store.appendMessage({ sessionId: id, role: "user", content: "hello" });
 * await store.close();
 */
export async function openSessionStore(options: OpenSessionStoreOptions = {}): Promise<SessionStore> {
  if (typeof options !== "object" || options === null) {
    throw new InvalidArgumentError("options", "openSessionStore options must be an object");
  }
  const path = options.path ?? resolveStatePath();
  if (typeof path !== "string" || path.length === 0) {
    throw new InvalidArgumentError("path", "path must be a non-empty string");
  }
  const deadlineMs = options.writeDeadlineMs ?? DEFAULT_WRITE_POLICY.deadlineMs;
  if (!Number.isFinite(deadlineMs) || deadlineMs < 0) {
    throw new InvalidArgumentError("writeDeadlineMs", "writeDeadlineMs must be a non-negative number");
  }
  const migrationDeadlineMs = options.migrationDeadlineMs ?? DEFAULT_MIGRATION_DEADLINE_MS;
  if (!Number.isFinite(migrationDeadlineMs) || migrationDeadlineMs < 0) {
    throw new InvalidArgumentError(
      "migrationDeadlineMs",
      "migrationDeadlineMs must be a non-negative number",
    );
  }
  const maxGroupSize = positiveInteger(
    "maxGroupSize",
    options.maxGroupSize,
    DEFAULT_WRITE_POLICY.maxGroupSize,
  );
  const walMaxBytes = positiveInteger("walMaxBytes", options.walMaxBytes, DEFAULT_WRITE_POLICY.walMaxBytes);
  refuseSymlinks(path);
  ensureParentDirectory(path);
  const pragmas = {
    busyTimeoutMs: options.busyTimeoutMs ?? 5,
    synchronous: options.synchronous ?? "FULL",
    journalSizeLimit: options.journalSizeLimit ?? 16 * 1024 * 1024,
    readOnly: false,
  } as const;

  // A new file is built under a temporary name and linked into place whole (see
  // createDatabaseAtomically); an existing one is checked before SQLite may write to it.
  let created: MigrationReport | undefined;
  if (!(await preflightDatabaseFile(path))) {
    created = await createDatabaseAtomically(path, async (temp) => {
      let fresh: DatabaseConnection;
      try {
        fresh = new DatabaseConnection(temp, pragmas);
      } catch (error) {
        throw mapSqliteError(error, path);
      }
      try {
        checkSqliteVersion(fresh, options.allowUnsupportedSqlite === true);
        fresh.db.pragma("journal_mode = WAL");
        const queue = new WriteQueue(fresh, { ...DEFAULT_WRITE_POLICY, deadlineMs });
        return await runMigrations(fresh, MIGRATION_CHAIN, {
          transaction: (label, fn) => queue.run(label, fn),
          onProgress: options.onMigrationProgress,
        });
      } finally {
        fresh.close();
      }
    });
  }

  let conn: DatabaseConnection;
  let turns: HandoffQueue | undefined;
  try {
    conn = new DatabaseConnection(path, pragmas);
  } catch (error) {
    throw mapSqliteError(error, path);
  }
  try {
    verifyOpenedDatabase(conn);
    checkSqliteVersion(conn, options.allowUnsupportedSqlite === true);
    tightenPermissions(path);
    await setWalMode(conn, deadlineMs);
    turns = options.fairWrites === false ? undefined : HandoffQueue.open(path);
    const shared =
      turns === undefined || options.shareCommits === false ? undefined : new SharedCommits(turns, conn);
    const writes = new WriteQueue(
      conn,
      {
        ...DEFAULT_WRITE_POLICY,
        deadlineMs,
        checkpointEvery: options.checkpointEvery ?? DEFAULT_WRITE_POLICY.checkpointEvery,
        maxGroupSize,
        walMaxBytes,
      },
      () => walSize(path),
      referenceSearchIndexRepair(conn),
      turns,
      shared,
      referenceSearchMergePacing(conn),
    );
    // Upgrading a big old file holds the write lock for minutes (a million messages
    // re-indexed); a process opening the same file meanwhile waits for it instead of failing.
    const upgrades = new WriteQueue(conn, {
      ...DEFAULT_WRITE_POLICY,
      deadlineMs: migrationDeadlineMs,
    });
    const migration = await runMigrations(conn, MIGRATION_CHAIN, {
      transaction: (label, fn) => upgrades.run(label, fn),
      onProgress: options.onMigrationProgress,
    });
    tightenPermissions(path);
    return new SessionStore(
      conn,
      writes,
      created ?? migration,
      options.clock ?? (() => Date.now() / 1000),
      turns,
      shared,
    );
  } catch (error) {
    turns?.close();
    conn.close();
    throw mapSqliteError(error, path);
  }
}

/** Refuses a SQLite older than {@link MIN_SQLITE_VERSION} unless allowed. */
function checkSqliteVersion(conn: DatabaseConnection, allow: boolean): void {
  const version = String(conn.db.prepare("SELECT sqlite_version() AS v").pluck().get());
  if (!allow && !isSupportedSqliteVersion(version)) {
    throw new HermesStoreError(
      "UNSUPPORTED_SQLITE",
      `SQLite ${version} is older than ${MIN_SQLITE_VERSION}, which fixes a WAL-reset bug that can ` +
        "corrupt a database shared by several processes. Upgrade better-sqlite3, or pass " +
        "allowUnsupportedSqlite: true to accept the risk.",
    );
  }
}

/** Switches to WAL, waiting on timers while another connection holds the lock. */
async function setWalMode(conn: DatabaseConnection, deadlineMs: number): Promise<void> {
  const started = performance.now();
  for (let backoff = 1; ; backoff = Math.min(backoff * 2, 50)) {
    try {
      const mode = conn.db.pragma("journal_mode = WAL", { simple: true });
      if (String(mode).toLowerCase() !== "wal") {
        throw new HermesStoreError(
          "SQLITE_ERROR",
          `Could not switch ${conn.path} to WAL mode (journal_mode is ${String(mode)})`,
        );
      }
      return;
    } catch (error) {
      if (!isBusyError(error) || performance.now() - started > deadlineMs) throw error;
      await sleep(backoff / 2 + Math.random() * (backoff / 2));
    }
  }
}
