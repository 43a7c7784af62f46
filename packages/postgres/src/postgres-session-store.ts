import type { SessionRow, MessageRow as StoredMessageRow } from "@hermes/schema";
import type { SearchIndexProgress, SearchIndexReport } from "@hermes/search";
import {
  type AnthropicConversation,
  type AppendMessageInput,
  type AutoPruneOptions,
  type AutoPruneResult,
  type ConversationMessage,
  type ConversationWindow,
  type ConversationWindowOptions,
  type CreateSessionInput,
  canonicalMessage,
  canonicalSession,
  conversationWindowArguments,
  type EnsureSessionInput,
  type ExportReport,
  type ExportStreamOptions,
  exportFilter,
  type ForkSessionOptions,
  forkArguments,
  type ImportReport,
  type ImportSessionsOptions,
  type ImportSource,
  InvalidArgumentError,
  type IterMessagesOptions,
  iterMessagesArguments,
  type JsonlDestination,
  jsonlHeaderLine,
  type Lineage,
  type LineageLinkKind,
  type LineageNode,
  type ListSessionsRichOptions,
  MAX_LINEAGE_HOPS,
  type MessageRow,
  newSessionId,
  nonNegativeInt,
  optionalNumber,
  optionalString,
  options,
  type PortableSession,
  type RichSessionRow,
  requireId,
  type SearchHit,
  type SearchMessagesOptions,
  type SessionExport,
  SessionNotFoundError,
  type SessionStoreApi,
  type SessionWithLastActive,
  StoreClosedError,
  type StoreStats,
  sessionToMarkdown,
  sinkFor,
  TitleConflictError,
  toAnthropicMessages,
  toMessageRow,
  type UpdateTokenCountsInput,
  type UsageStatsOptions,
  type UsageStatsRow,
  WindowPicker,
} from "@hermes/store";
import { sql } from "kysely";
import pg from "pg";
import * as conversation from "./operations/conversation.js";
import { conversationOf } from "./operations/conversation.js";
import * as listing from "./operations/listing.js";
import * as messages from "./operations/messages.js";
import * as retention from "./operations/retention.js";
import * as search from "./operations/search.js";
import * as sessions from "./operations/sessions.js";
import { sessionById } from "./operations/sessions.js";
import * as titles from "./operations/titles.js";
import { nextTitleInLineage } from "./operations/titles.js";
import { anyText, collateC, createPgDb, type PgDb } from "./pg-database.js";
import { mapPgError } from "./pg-errors.js";
import { importIntoPg } from "./pg-import.js";
import { migratePg, type PgMigrationReport } from "./pg-schema.js";
import type { PgStoreContext } from "./pg-store-context.js";
import { PgWriter } from "./pg-writer.js";
import { MESSAGE_COLUMNS, SESSION_COLUMNS } from "./table-columns.js";

/** Options of {@link openPostgresSessionStore}. */
export interface OpenPostgresSessionStoreOptions {
  /** `postgres://user@host:port/db`; the store creates (and closes) its own pool. */
  connectionString?: string;
  /** A pool of yours (closed by you, not by `close()`); its connections must use `schema` if given. */
  pool?: pg.Pool;
  /**
   * Schema holding the tables (default: the connection's `search_path`, usually `public`);
   * created when missing. Only with `connectionString`.
   */
  schema?: string;
  /** Most connections of the pool the store creates (default 10). */
  maxConnections?: number;
  /** Total patience of one write under serialization failures or deadlocks, in ms (default 30 000). */
  writeDeadlineMs?: number;
  /** Clock in Unix epoch seconds; for tests. */
  clock?: () => number;
}

/** `model_config` of a fork: the parent's object with `_branched_from`, else a new object. */
function branchedConfig(config: string | null, parentId: string): string {
  if (config !== null) {
    try {
      const parsed: unknown = JSON.parse(config);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
        return JSON.stringify({ ...(parsed as Record<string, unknown>), _branched_from: parentId });
      }
    } catch {
      // not JSON: replaced, as SQLite's json_valid check does
    }
  }
  return JSON.stringify({ _branched_from: parentId });
}

/** A stored `tool_calls` value's weight in `tool_call_count` (array length, else 1, none 0). */
function toolCallWeight(text: string | null): number {
  if (text === null) return 0;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.length : 1;
  } catch {
    return 1;
  }
}

type NodeRow = Omit<LineageNode, "depth" | "link"> & {
  c_model_config: string | null;
  p_id: string | null;
  p_end_reason: string | null;
  p_ended_at: number | null;
};

const NODE_FIELDS = `c.id, c.parent_session_id, c.title, c.source, c.started_at, c.ended_at, c.end_reason,
  c.message_count, c.model_config AS c_model_config, p.id AS p_id, p.end_reason AS p_end_reason, p.ended_at AS p_ended_at`;

/** A lineage node (`c`) with what its link kind depends on from its parent (`p`). */
function nodeQuery(db: PgDb) {
  return db
    .selectFrom("sessions as c")
    .leftJoin("sessions as p", "p.id", "c.parent_session_id")
    .select([
      "c.id",
      "c.parent_session_id",
      "c.title",
      "c.source",
      "c.started_at",
      "c.ended_at",
      "c.end_reason",
      "c.message_count",
      "c.model_config as c_model_config",
      "p.id as p_id",
      "p.end_reason as p_end_reason",
      "p.ended_at as p_ended_at",
    ]);
}

function marker(config: string | null, key: string): boolean {
  if (config === null) return false;
  try {
    const parsed: unknown = JSON.parse(config);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return false;
    const value = (parsed as Record<string, unknown>)[key];
    return value !== undefined && value !== null;
  } catch {
    return false;
  }
}

/** The link kind, by the rules of the SQLite store's lineage query. */
function toNode(row: NodeRow): Omit<LineageNode, "depth"> {
  let link: LineageLinkKind | null;
  const startedAfterEnd = row.p_ended_at !== null && row.started_at >= row.p_ended_at;
  if (row.p_id === null) link = null;
  else if (marker(row.c_model_config, "_branched_from")) link = "branch";
  else if (marker(row.c_model_config, "_delegate_from")) link = "delegate";
  else if (row.p_end_reason === "compression" && startedAfterEnd) link = "compression";
  else if (row.p_end_reason === "branched" && startedAfterEnd) link = "branch";
  else if (row.source === "subagent" || row.p_ended_at === null || row.started_at < row.p_ended_at)
    link = "delegate";
  else link = "other";
  return {
    id: row.id,
    parent_session_id: row.parent_session_id,
    title: row.title,
    source: row.source,
    started_at: row.started_at,
    ended_at: row.ended_at,
    end_reason: row.end_reason,
    message_count: row.message_count,
    link,
  };
}

/**
 * The session store on PostgreSQL: every method of `@hermes/store`'s `SessionStore`, with the
 * same rows, values and errors. Open it with {@link openPostgresSessionStore}.
 *
 * Each method checks its arguments and runs one operation of `operations/` or `portable/`
 * (the same files as the SQLite store's) on a {@link PgStoreContext}: reads on the pool,
 * writes one transaction each through the store's FIFO writer.
 */
export class PostgresSessionStore implements SessionStoreApi {
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #db: PgDb;
  readonly #writer: PgWriter;
  readonly #migration: PgMigrationReport;
  readonly #now: () => number;
  readonly #ctx: PgStoreContext;
  #closed = false;
  #closing: Promise<void> | undefined;
  #reads = new Set<Promise<unknown>>();

  /** @internal Use {@link openPostgresSessionStore}. */
  constructor(
    pool: pg.Pool,
    ownsPool: boolean,
    db: PgDb,
    deadlineMs: number,
    migration: PgMigrationReport,
    clock: () => number,
  ) {
    this.#pool = pool;
    this.#ownsPool = ownsPool;
    this.#db = db;
    this.#writer = new PgWriter(db, deadlineMs);
    this.#migration = migration;
    this.#now = clock;
    this.#ctx = {
      db,
      now: clock,
      check: () => this.#check(),
      read: (fn) => this.#read(fn),
      snapshot: (fn) => this.#snapshot(fn),
      write: (fn, o) => this.#write(fn, o),
      guard: (source) => this.#guard(source),
      corpus: {},
    };
  }

  /** Where the data lives (a PostgreSQL server), for messages. */
  get path(): string {
    return "postgresql";
  }

  /** What opening did to the schema. */
  get migration(): PgMigrationReport {
    return this.#migration;
  }

  #check(): void {
    if (this.#closed) throw new StoreClosedError();
  }

  async #read<T>(fn: (db: PgDb) => Promise<T>): Promise<T> {
    this.#check();
    const p = fn(this.#db).catch((error: unknown) => {
      throw mapPgError(error);
    });
    this.#reads.add(p);
    try {
      return await p;
    } finally {
      this.#reads.delete(p);
    }
  }

  /** Several reads from one snapshot (REPEATABLE READ, read only). */
  async #snapshot<T>(fn: (db: PgDb) => Promise<T>): Promise<T> {
    return this.#read((db) =>
      db.transaction().setIsolationLevel("repeatable read").setAccessMode("read only").execute(fn),
    );
  }

  #write<T>(fn: (db: PgDb) => Promise<T>, o?: { transaction?: boolean }): Promise<T> {
    this.#check();
    return this.#writer.run(fn, o);
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

  /** Sessions for a picker with `last_active` and `preview` (see `@hermes/store`). */
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
    return search.verifySearchIndex(this.#ctx);
  }

  /** Recomputes every message's search vector, in transactions of 1,000 messages. */
  async rebuildSearchIndex(o?: { onProgress?: (progress: SearchIndexProgress) => void }): Promise<void> {
    return search.rebuildSearchIndex(this.#ctx, o);
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
  async pruneSessions(o?: {
    olderThanDays?: number;
    source?: string;
    sessionsDir?: string;
  }): Promise<number> {
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

  /** Startup housekeeping: prune (and vacuum) at most once per `minIntervalHours`. Never throws. */
  maybeAutoPruneAndVacuum(o?: AutoPruneOptions): Promise<AutoPruneResult> {
    return retention.maybeAutoPruneAndVacuum(this.#ctx, o);
  }

  // Portability ---------------------------------------------------------------------------

  /** Every matching session with its messages, one at a time, from one snapshot. */
  exportStream(o?: ExportStreamOptions): AsyncIterable<PortableSession> {
    this.#check();
    const filter = exportFilter(o);
    return this.#guard(this.#exportSessions(filter));
  }

  async *#exportSessions(filter: ReturnType<typeof exportFilter>): AsyncGenerator<PortableSession> {
    // One snapshot held across the pages (and the consumer's pauses between sessions).
    let trx: Awaited<ReturnType<ReturnType<PgDb["startTransaction"]>["execute"]>>;
    try {
      trx = await this.#db
        .startTransaction()
        .setIsolationLevel("repeatable read")
        .setAccessMode("read only")
        .execute();
    } catch (error) {
      throw mapPgError(error);
    }
    try {
      const ids = filter.ids === null ? null : (JSON.parse(filter.ids) as string[]);
      let afterT = Number.NEGATIVE_INFINITY;
      let afterId = "";
      for (;;) {
        const sessions = (await trx
          .selectFrom("sessions")
          .select(SESSION_COLUMNS)
          // Keyset paging in the SQLite store's order (ids compared bytewise).
          .where(
            sql<boolean>`(started_at, id COLLATE "C") > (${afterT}::double precision, ${afterId}::text COLLATE "C")`,
          )
          .$if(filter.source !== null, (qb) => qb.where("source", "=", filter.source!))
          .$if(filter.since !== null, (qb) => qb.where("started_at", ">=", filter.since!))
          .$if(ids !== null, (qb) => qb.where("id", "=", anyText(ids!)))
          .orderBy("started_at")
          .orderBy(collateC("id"))
          .limit(200)
          .execute()) as Record<string, unknown>[];
        for (const raw of sessions) {
          const session = canonicalSession(raw);
          const messages: StoredMessageRow[] = [];
          let mT = Number.NEGATIVE_INFINITY;
          let mId = 0;
          for (;;) {
            const page = await trx
              .selectFrom("messages")
              .select(MESSAGE_COLUMNS)
              .where("session_id", "=", session.id)
              .where((eb) => eb(eb.refTuple("timestamp", "id"), ">", eb.tuple(mT, mId)))
              .orderBy("timestamp")
              .orderBy("id")
              .limit(1000)
              .execute();
            for (const m of page) messages.push(canonicalMessage(m as Record<string, unknown>));
            if (page.length < 1000) break;
            const last = messages[messages.length - 1]!;
            mT = last.timestamp;
            mId = last.id;
          }
          yield { ...session, messages };
        }
        if (sessions.length < 200) break;
        const last = sessions[sessions.length - 1]!;
        afterT = last.started_at as number;
        afterId = last.id as string;
      }
      await trx.commit().execute();
    } catch (error) {
      throw mapPgError(error);
    } finally {
      // Ends the snapshot when the consumer stops early or a page failed (a no-op after commit).
      if (!trx.isCommitted && !trx.isRolledBack)
        await trx
          .rollback()
          .execute()
          .catch(() => {});
    }
  }

  /** Writes the JSONL interchange format (header, then one session per line). */
  async exportJsonl(destination: JsonlDestination, o?: ExportStreamOptions): Promise<ExportReport> {
    this.#check();
    const filter = exportFilter(o);
    const sink = await sinkFor(destination);
    const report: ExportReport = { sessions: 0, messages: 0, bytes: 0 };
    try {
      await sink.write(jsonlHeaderLine(this.#now(), o));
      for await (const s of this.#exportSessions(filter)) {
        await sink.write(`${JSON.stringify(s)}\n`);
        report.sessions++;
        report.messages += s.messages.length;
      }
      report.bytes = await sink.finish();
      return report;
    } catch (error) {
      await sink.abort();
      throw error;
    }
  }

  /** A Markdown rendering of a session, or `null` for an unknown session. */
  async exportSessionMarkdown(id: string): Promise<string | null> {
    const sid = requireId("id", id);
    for await (const s of this.exportStream({ sessionIds: [sid] })) return sessionToMarkdown(s);
    return null;
  }

  /** Imports sessions from a JSONL file or an iterable; idempotent, parents before children. */
  async importSessions(source: ImportSource, o?: ImportSessionsOptions): Promise<ImportReport> {
    this.#check();
    return importIntoPg(
      {
        exists: async (id) =>
          (await this.#db.selectFrom("sessions").select("id").where("id", "=", id).executeTakeFirst()) !==
          undefined,
        write: (fn) => this.#write(fn),
      },
      source,
      o,
    );
  }

  /** A session's messages page by page (cursor `afterId`), in conversation order. */
  iterMessages(sessionId: string, o?: IterMessagesOptions): AsyncIterable<MessageRow> {
    const { id, limit, pageSize, afterId } = iterMessagesArguments(sessionId, o);
    this.#check();
    const read = <T>(fn: (db: PgDb) => Promise<T>) => this.#read(fn);
    return this.#guard(
      (async function* () {
        let afterT = Number.NEGATIVE_INFINITY;
        let cursorId = 0;
        if (afterId !== undefined) {
          const row = await read((db) =>
            db
              .selectFrom("messages")
              .select("timestamp")
              .where("id", "=", afterId)
              .where("session_id", "=", id)
              .executeTakeFirst(),
          );
          if (row === undefined) {
            throw new InvalidArgumentError("afterId", `message ${afterId} is not a message of session ${id}`);
          }
          afterT = row.timestamp;
          cursorId = afterId;
        }
        let left = limit;
        while (left > 0) {
          const n = Math.min(pageSize, left);
          const page = await read((db) =>
            db
              .selectFrom("messages")
              .select(MESSAGE_COLUMNS)
              .where("session_id", "=", id)
              .where((eb) => eb(eb.refTuple("timestamp", "id"), ">", eb.tuple(afterT, cursorId)))
              .orderBy("timestamp")
              .orderBy("id")
              .limit(n)
              .execute(),
          );
          const last = page[page.length - 1];
          for (const row of page) yield toMessageRow(row);
          left -= page.length;
          if (page.length < n || last === undefined) return;
          afterT = last.timestamp;
          cursorId = last.id;
        }
      })(),
    );
  }

  /** The last messages of a session, bounded by count and tokens. */
  async getConversationWindow(sessionId: string, o?: ConversationWindowOptions): Promise<ConversationWindow> {
    const { id, lastMessages, maxTokens } = conversationWindowArguments(sessionId, o);
    return this.#snapshot(async (db) => {
      const total =
        (
          await db
            .selectFrom("messages")
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .where("session_id", "=", id)
            .executeTakeFirst()
        )?.n ?? 0;
      const picker = new WindowPicker(lastMessages, maxTokens);
      while (picker.wanted > 0) {
        picker.take(
          await db
            .selectFrom("messages")
            .select([
              "id",
              "timestamp",
              "role",
              "content",
              "tool_call_id",
              "tool_calls",
              "tool_name",
              "token_count",
              "reasoning",
              "reasoning_content",
              "reasoning_details",
              "codex_reasoning_items",
              "codex_message_items",
            ])
            .where("session_id", "=", id)
            .where((eb) => eb(eb.refTuple("timestamp", "id"), "<", eb.tuple(picker.beforeT, picker.beforeId)))
            .orderBy("timestamp", "desc")
            .orderBy("id", "desc")
            .limit(picker.wanted)
            .execute(),
        );
      }
      return picker.result(total);
    });
  }

  /** The conversation in the Anthropic Messages shape. */
  async getMessagesAsAnthropic(
    sessionId: string,
    o?: { includeAncestors?: boolean },
  ): Promise<AnthropicConversation> {
    const id = requireId("sessionId", sessionId);
    const includeAncestors = options("options", o).includeAncestors;
    if (includeAncestors !== undefined && typeof includeAncestors !== "boolean") {
      throw new InvalidArgumentError("includeAncestors", "includeAncestors must be a boolean");
    }
    return this.#snapshot(async (db) => {
      const row = await db
        .selectFrom("sessions")
        .select("system_prompt")
        .where("id", "=", id)
        .executeTakeFirst();
      return toAnthropicMessages(
        await conversationOf(db, id, includeAncestors === true),
        row?.system_prompt ?? null,
      );
    });
  }

  /** Forks a session (messages up to `atMessageId`); returns the new row. */
  async forkSession(id: string, o?: ForkSessionOptions): Promise<SessionRow> {
    const { parentId, at, requestedId, explicitTitle } = forkArguments(id, o);
    return this.#write(async (db) => {
      const parent = await sessionById(db, parentId);
      if (parent === undefined)
        throw new SessionNotFoundError(parentId, `forkSession: session ${parentId} does not exist`);
      let atT = Number.POSITIVE_INFINITY;
      let atId = Number.MAX_SAFE_INTEGER;
      if (at !== undefined) {
        const row = await db
          .selectFrom("messages")
          .select("timestamp")
          .where("id", "=", at)
          .where("session_id", "=", parentId)
          .executeTakeFirst();
        if (row === undefined) {
          throw new InvalidArgumentError(
            "atMessageId",
            `message ${at} is not a message of session ${parentId}`,
          );
        }
        atT = row.timestamp;
        atId = at;
      }
      const now = this.#now();
      const newId = requestedId ?? newSessionId(now);
      if (
        (await db.selectFrom("sessions").select("id").where("id", "=", newId).executeTakeFirst()) !==
        undefined
      ) {
        throw new InvalidArgumentError("newId", `a session with id ${newId} already exists`);
      }
      let title: string | null;
      if (explicitTitle !== undefined) {
        title = explicitTitle;
        const holder =
          title === null
            ? undefined
            : await db
                .selectFrom("sessions")
                .select("id")
                .where("title", "=", title)
                .limit(1)
                .executeTakeFirst();
        if (holder !== undefined && title !== null) throw new TitleConflictError(title, holder.id);
      } else {
        title = parent.title === null ? null : await nextTitleInLineage(db, parent.title);
      }
      await db
        .insertInto("sessions")
        .values({
          id: newId,
          source: parent.source,
          user_id: parent.user_id,
          model: parent.model,
          model_config: branchedConfig(parent.model_config, parentId),
          system_prompt: parent.system_prompt,
          parent_session_id: parentId,
          started_at: now,
          title,
          billing_provider: parent.billing_provider,
          billing_base_url: parent.billing_base_url,
          billing_mode: parent.billing_mode,
        })
        .execute();
      // The messages up to the fork point, copied with their search columns in one statement.
      const copied = [
        ...MESSAGE_COLUMNS.filter((c) => c !== "id" && c !== "session_id"),
        "search_vector",
        "search_tokens",
        "search_trigrams",
      ] as const;
      await db
        .insertInto("messages")
        .columns(["session_id", ...copied])
        .expression((eb) =>
          eb
            .selectFrom("messages")
            .select((e) => [e.val(newId).as("session_id"), ...copied])
            .where("session_id", "=", parentId)
            .where((e) => e(e.refTuple("timestamp", "id"), "<=", e.tuple(atT, atId)))
            .orderBy("timestamp")
            .orderBy("id"),
        )
        .execute();
      const copiedCalls = await db
        .selectFrom("messages")
        .select("tool_calls")
        .where("session_id", "=", newId)
        .execute();
      let toolCalls = 0;
      for (const m of copiedCalls) toolCalls += toolCallWeight(m.tool_calls);
      await db
        .updateTable("sessions")
        .set({ message_count: copiedCalls.length, tool_call_count: toolCalls })
        .where("id", "=", newId)
        .execute();
      return (await sessionById(db, newId)) as SessionRow;
    });
  }

  /** Ancestors and descendants of a session with the kind of each link, or `null`. */
  async getLineage(id: string, o?: { maxDescendants?: number }): Promise<Lineage | null> {
    const sessionId = requireId("id", id);
    const limit = nonNegativeInt("maxDescendants", options("options", o).maxDescendants, 10_000, 1_000_000);
    return this.#snapshot(async (db) => {
      const node = async (nid: string) =>
        (await nodeQuery(db).where("c.id", "=", nid).executeTakeFirst()) as NodeRow | undefined;
      const self = await node(sessionId);
      if (self === undefined) return null;
      const session: LineageNode = { ...toNode(self), depth: 0 };
      const ancestors: LineageNode[] = [];
      const seen = new Set<string>([sessionId]);
      let parentId = self.parent_session_id;
      for (let depth = 1; depth <= MAX_LINEAGE_HOPS && parentId !== null && !seen.has(parentId); depth++) {
        const row = await node(parentId);
        if (row === undefined) break;
        seen.add(row.id);
        ancestors.push({ ...toNode(row), depth });
        parentId = row.parent_session_id;
      }
      ancestors.reverse();
      // Descendants breadth first by a recursive CTE (UNION stops at cycles).
      const rows = (
        await sql<NodeRow & { depth: number }>`WITH RECURSIVE tree(id, depth) AS (
             SELECT id, 1 FROM sessions WHERE parent_session_id = ${sessionId}
             UNION
             SELECT s.id, t.depth + 1 FROM sessions s JOIN tree t ON s.parent_session_id = t.id
             WHERE t.depth < ${MAX_LINEAGE_HOPS}
           )
           SELECT ${sql.raw(NODE_FIELDS)}, t.depth AS depth FROM tree t
             JOIN sessions c ON c.id = t.id LEFT JOIN sessions p ON p.id = c.parent_session_id
           ORDER BY t.depth, c.started_at, c.id COLLATE "C" LIMIT ${limit + seen.size}`.execute(db)
      ).rows;
      const descendants: LineageNode[] = [];
      const inTree = new Set<string>([sessionId]);
      for (const row of rows) {
        if (inTree.has(row.id) || descendants.length >= limit) continue;
        inTree.add(row.id);
        descendants.push({ ...toNode(row), depth: row.depth });
      }
      return { session, root_id: ancestors[0]?.id ?? sessionId, ancestors, descendants };
    });
  }

  /** Sessions, messages, tokens and cost grouped by source, model or UTC day. */
  async usageStats(o: UsageStatsOptions): Promise<UsageStatsRow[]> {
    const opts = options("options", o);
    const groupBy = opts.groupBy;
    if (groupBy !== "source" && groupBy !== "model" && groupBy !== "day") {
      throw new InvalidArgumentError("groupBy", "groupBy must be 'source', 'model' or 'day'");
    }
    const group =
      groupBy === "day"
        ? sql<string>`to_char(to_timestamp(started_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`
        : sql<string>`${sql.ref(groupBy)}`;
    const since = optionalNumber("since", opts.since);
    const until = optionalNumber("until", opts.until);
    const source = optionalString("source", opts.source);
    return this.#read(
      (db) =>
        db
          .selectFrom("sessions")
          .select((eb) => {
            const total = (
              column:
                | "message_count"
                | "tool_call_count"
                | "api_call_count"
                | "input_tokens"
                | "output_tokens"
                | "cache_read_tokens"
                | "cache_write_tokens"
                | "reasoning_tokens",
            ) => eb.fn.coalesce(eb.fn.sum<number>(column), sql.lit(0));
            return [
              group.as("group"),
              eb.fn.countAll<number>().as("sessions"),
              total("message_count").as("messages"),
              total("tool_call_count").as("tool_calls"),
              total("api_call_count").as("api_calls"),
              total("input_tokens").as("input_tokens"),
              total("output_tokens").as("output_tokens"),
              total("cache_read_tokens").as("cache_read_tokens"),
              total("cache_write_tokens").as("cache_write_tokens"),
              total("reasoning_tokens").as("reasoning_tokens"),
              eb.fn.sum<number | null>("estimated_cost_usd").as("estimated_cost_usd"),
              eb.fn.sum<number | null>("actual_cost_usd").as("actual_cost_usd"),
            ];
          })
          .$if(since !== null, (qb) => qb.where("started_at", ">=", since!))
          .$if(until !== null, (qb) => qb.where("started_at", "<", until!))
          .$if(source !== null, (qb) => qb.where("source", "=", source!))
          .groupBy(sql`1`)
          // Groups sorted bytewise, no group (NULL) first, as SQLite sorts them.
          .orderBy(sql`${group} COLLATE "C" NULLS FIRST`)
          .execute() as Promise<UsageStatsRow[]>,
    );
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
      throw error;
    }
  }

  // Lifecycle -------------------------------------------------------------------------------

  /**
   * Counters of the write path, in the SQLite store's shape: every transaction holds one write
   * (no group commit: the server commits concurrent transactions itself), and there is no WAL
   * file or cross-process queue of writers, so the checkpoint, WAL and hand-off fields stay 0.
   */
  stats(): StoreStats {
    const w = this.#writer.stats;
    return {
      ...w,
      groupsCommitted: w.writes,
      writesPerGroupMean: w.writes > 0 ? 1 : 0,
      writesPerGroupMax: w.writes > 0 ? 1 : 0,
      checkpoints: 0,
      handoffs: 0,
      deferrals: 0,
      sharedWrites: 0,
      servedWrites: 0,
      walRestarts: 0,
      walEscalations: 0,
      walBytesMax: 0,
      walBytes: 0,
    };
  }

  /** Waits for queued writes and running reads, then closes the pool (when the store made it). */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      await this.#writer.whenIdle();
      await Promise.allSettled([...this.#reads]);
      if (this.#ownsPool) await this.#pool.end();
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** Validates a schema name (an SQL identifier we create and quote). */
function schemaName(value: unknown): string {
  if (typeof value !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(value)) {
    throw new InvalidArgumentError("schema", "schema must be an SQL identifier (letters, digits, _)");
  }
  return value;
}

/**
 * Opens the store on a PostgreSQL server and brings its schema up to date (under an advisory
 * lock, so instances starting together migrate once).
 *
 * @example
 * const store = await openPostgresSessionStore({ connectionString: "postgres://app@db/hermes" });
 * await store.createSession({ id: "s1", source: "gateway" });
 */
export async function openPostgresSessionStore(
  o: OpenPostgresSessionStoreOptions,
): Promise<PostgresSessionStore> {
  const opts = options("options", o);
  const deadlineMs = opts.writeDeadlineMs ?? 30_000;
  if (typeof deadlineMs !== "number" || !Number.isFinite(deadlineMs) || deadlineMs < 0) {
    throw new InvalidArgumentError("writeDeadlineMs", "writeDeadlineMs must be a non-negative number");
  }
  const schema = opts.schema === undefined ? null : schemaName(opts.schema);
  let pool: pg.Pool;
  let owns: boolean;
  if (opts.pool !== undefined) {
    if (!(opts.pool instanceof pg.Pool)) throw new InvalidArgumentError("pool", "pool must be a pg Pool");
    if (schema !== null) throw new InvalidArgumentError("schema", "schema is only for connectionString");
    pool = opts.pool;
    owns = false;
  } else {
    const connectionString = requireId("connectionString", opts.connectionString);
    if (schema !== null) {
      // The schema must exist before the pool's connections point their search_path at it: made
      // on a one-connection pool of its own, under a session-level advisory lock (released when
      // that pool ends) so that instances starting together do not race on CREATE SCHEMA.
      const setupPool = new pg.Pool({ connectionString, max: 1 });
      const setup = createPgDb(setupPool);
      try {
        await setup.connection().execute(async (db) => {
          await sql`SELECT pg_advisory_lock(hashtext('hermes-sessions-schema'))`.execute(db);
          await db.schema.createSchema(schema).ifNotExists().execute();
        });
      } catch (error) {
        throw mapPgError(error);
      } finally {
        await setupPool.end().catch(() => {});
      }
    }
    pool = new pg.Pool({
      connectionString,
      max: nonNegativeInt("maxConnections", opts.maxConnections, 10, 1000) || 10,
      ...(schema === null ? {} : { options: `-c search_path="${schema}",public` }),
    });
    // An idle connection the server drops (restart, admin shutdown) is discarded by the pool;
    // without a listener its 'error' event would crash the process.
    pool.on("error", () => {});
    owns = true;
  }
  const db = createPgDb(pool);
  try {
    const migration = await migratePg(db);
    return new PostgresSessionStore(
      pool,
      owns,
      db,
      deadlineMs,
      migration,
      opts.clock ?? (() => Date.now() / 1000),
    );
  } catch (error) {
    if (owns) await pool.end().catch(() => {});
    throw mapPgError(error);
  }
}
