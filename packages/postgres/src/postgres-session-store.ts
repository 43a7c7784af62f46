import type {
  MessagesTable,
  SessionRow,
  SessionsTable,
  MessageRow as StoredMessageRow,
} from "@hermes/schema";
import {
  firstCodePoints,
  lexCjkQuery,
  parseFtsQuery,
  parseQueryTokens,
  type planSearch,
  positiveTerms,
  pyStrip,
  queryTerms,
  type SearchIndexProgress,
  type SearchIndexReport,
  sanitizeFts5Query,
  substringExcerpt,
} from "@hermes/search";
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
  duration,
  type EnsureSessionInput,
  EXPORT_ALL_LIMIT,
  type ExportReport,
  type ExportStreamOptions,
  escapeLike,
  exportFilter,
  type ForkSessionOptions,
  forkArguments,
  type ImportReport,
  type ImportSessionsOptions,
  type ImportSource,
  InvalidArgumentError,
  type IterMessagesOptions,
  integer,
  isReplayedUserPrompt,
  iterMessagesArguments,
  type JsonlDestination,
  jsonlHeaderLine,
  type Lineage,
  type LineageLinkKind,
  type LineageNode,
  type ListSessionsRichOptions,
  lineageBase,
  MAX_APPEND_BATCH,
  MAX_LIMIT,
  MAX_LINEAGE_HOPS,
  MESSAGE_COLUMNS as MESSAGE_COLUMN_SPECS,
  type MessagePage,
  type MessagePageOptions,
  type MessageRow,
  messagePageArguments,
  messageRowFor,
  newSessionId,
  newSessionRow,
  nextLineageTitle,
  nonNegativeInt,
  optionalNumber,
  optionalString,
  optionalStringArray,
  options,
  type PortableSession,
  previewOf,
  REPLAY_COLUMNS,
  type RichSessionRow,
  removeSessionFiles,
  requireId,
  runAutoPrune,
  SESSION_COLUMNS as SESSION_COLUMN_SPECS,
  type SearchHit,
  type SearchMessagesOptions,
  type SessionExport,
  SessionNotFoundError,
  type SessionPage,
  type SessionPageOptions,
  type SessionStoreApi,
  type SessionWithLastActive,
  StoreClosedError,
  type StoreStats,
  sanitizeTitle,
  searchArguments,
  sessionPageArguments,
  sessionsDirOf,
  sessionToMarkdown,
  sinkFor,
  TIP_FIELDS,
  TitleConflictError,
  titleArgument,
  toAnthropicMessages,
  toConversationMessage,
  toMessageRow,
  type UpdateTokenCountsInput,
  type UsageStatsOptions,
  type UsageStatsRow,
  WindowPicker,
} from "@hermes/store";
import { type Expression, type ExpressionBuilder, type RawBuilder, sql } from "kysely";
import pg from "pg";
import {
  BM25_B,
  BM25_K1,
  bm25Idf,
  fts5Snippet,
  type Phrase,
  queryPhrases,
  trigramPhrases,
  trigramTokens,
} from "./fts5-compat.js";
import {
  anyText,
  createPgDb,
  foreignKeyToNotFound,
  isUniqueViolation,
  mapPgError,
  type PgDatabase,
  type PgDb,
  PgWriter,
} from "./pg-database.js";
import { importIntoPg } from "./pg-import.js";
import { pgMessagePage } from "./pg-message-page.js";
import { migratePg, type PgMigrationReport } from "./pg-schema.js";
import {
  SEARCH_DOCUMENT_SQL,
  searchTokenCount,
  searchTrigramCount,
  searchVectorLiteral,
  substringCondition,
  tsqueryLiteral,
  wordTokensAt,
} from "./pg-search-text.js";
import { pgSessionPage } from "./pg-session-page.js";

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

/** The columns of `sessions`, in the table's order (what `getSession` returns). */
const SESSION_COLUMNS = SESSION_COLUMN_SPECS.map((c) => c.name as keyof SessionsTable);
/** The same columns of the session aliased `s`. */
const S_COLUMNS = SESSION_COLUMNS.map((c) => `s.${c}` as const);
/** The columns of `messages` a reader gets (not the search columns). */
const MESSAGE_COLUMNS = MESSAGE_COLUMN_SPECS.map((c) => c.name as keyof MessagesTable);

type SessionsAsS = ExpressionBuilder<PgDatabase & { s: PgDatabase["sessions"] }, "s">;

/** When a session was last used: its newest message, else its start. */
function lastActive(eb: SessionsAsS) {
  return eb.fn
    .coalesce(
      eb
        .selectFrom("messages as m2")
        .select((e) => e.fn.max("m2.timestamp").as("t"))
        .whereRef("m2.session_id", "=", "s.id"),
      eb.ref("s.started_at"),
    )
    .as("last_active");
}

/** The first user message of the session, newlines as spaces, cut to 63 characters. */
const PREVIEW_RAW = sql<string>`COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, E'\\n', ' '), E'\\r', ' '), 1, 63)
   FROM messages m WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
   ORDER BY m.timestamp, m.id LIMIT 1), '')`;

/** Sorts text columns bytewise (as SQLite's BINARY collation) whatever the database's collation. */
const collateC = (column: string): RawBuilder<string> => sql<string>`${sql.ref(column)} COLLATE "C"`;

/** Python-style boolean option. */
function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "boolean") throw new InvalidArgumentError(name, `${name} must be a boolean`);
  return value;
}

type RawRich = SessionRow & { last_active: number; preview: unknown };

/**
 * The session store on PostgreSQL: every method of `@hermes/store`'s `SessionStore`, with the
 * same rows, values and errors. Open it with {@link openPostgresSessionStore}.
 */
export class PostgresSessionStore implements SessionStoreApi {
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #db: PgDb;
  readonly #writer: PgWriter;
  readonly #now: () => number;
  readonly #migration: PgMigrationReport;
  #closed = false;
  #closing: Promise<void> | undefined;
  #reads = new Set<Promise<unknown>>();
  #corpusCache: Partial<Record<"words" | "trigrams", { rows: number; size: number; at: number }>> = {};

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
    this.#now = clock;
    this.#migration = migration;
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
    const row = newSessionRow(input);
    const { id, parent_session_id: parent } = row;
    await this.#write(async (db) => {
      try {
        await db
          .insertInto("sessions")
          .values({ ...row, started_at: this.#now() })
          .onConflict((oc) => oc.column("id").doNothing())
          .execute();
      } catch (error) {
        throw foreignKeyToNotFound(error, parent ?? id, "createSession: unknown parent");
      }
    });
    return id;
  }

  /** Creates the session if missing (`source` defaults to `unknown`); never overwrites. */
  async ensureSession(input: EnsureSessionInput): Promise<void> {
    const s = options("session", input);
    const id = requireId("id", s.id);
    const source = s.source === undefined ? "unknown" : requireId("source", s.source);
    const model = optionalString("model", s.model);
    await this.#write(async (db) => {
      await db
        .insertInto("sessions")
        .values({ id, source, model, started_at: this.#now() })
        .onConflict((oc) => oc.column("id").doNothing())
        .execute();
    });
  }

  /** Marks a session ended; the first end wins. */
  async endSession(id: string, endReason: string): Promise<void> {
    const sid = requireId("id", id);
    const reason = requireId("endReason", endReason);
    await this.#write(async (db) => {
      await db
        .updateTable("sessions")
        .set({ ended_at: this.#now(), end_reason: reason })
        .where("id", "=", sid)
        .where("ended_at", "is", null)
        .execute();
    });
  }

  /** Clears `ended_at` and `end_reason`. */
  async reopenSession(id: string): Promise<void> {
    const sid = requireId("id", id);
    await this.#write(async (db) => {
      await db
        .updateTable("sessions")
        .set({ ended_at: null, end_reason: null })
        .where("id", "=", sid)
        .execute();
    });
  }

  /** Replaces the system prompt snapshot. */
  async updateSystemPrompt(id: string, systemPrompt: string): Promise<void> {
    const sid = requireId("id", id);
    const prompt = optionalString("systemPrompt", systemPrompt);
    await this.#write(async (db) => {
      await db.updateTable("sessions").set({ system_prompt: prompt }).where("id", "=", sid).execute();
    });
  }

  /** Adds (or with `absolute`, sets) token, cost and API-call counters. */
  async updateTokenCounts(id: string, input: UpdateTokenCountsInput = {}): Promise<void> {
    const u = options("usage", input);
    if (u.absolute !== undefined && typeof u.absolute !== "boolean") {
      throw new InvalidArgumentError("absolute", "absolute must be a boolean");
    }
    const sid = requireId("id", id);
    const inputTokens = integer("inputTokens", u.inputTokens);
    const output = integer("outputTokens", u.outputTokens);
    const cacheRead = integer("cacheReadTokens", u.cacheReadTokens);
    const cacheWrite = integer("cacheWriteTokens", u.cacheWriteTokens);
    const reasoning = integer("reasoningTokens", u.reasoningTokens);
    const estimated = optionalNumber("estimatedCostUsd", u.estimatedCostUsd);
    const actual = optionalNumber("actualCostUsd", u.actualCostUsd);
    const costStatus = optionalString("costStatus", u.costStatus);
    const costSource = optionalString("costSource", u.costSource);
    const pricingVersion = optionalString("pricingVersion", u.pricingVersion);
    const billingProvider = optionalString("billingProvider", u.billingProvider);
    const billingBaseUrl = optionalString("billingBaseUrl", u.billingBaseUrl);
    const billingMode = optionalString("billingMode", u.billingMode);
    const model = optionalString("model", u.model);
    const apiCalls = integer("apiCallCount", u.apiCallCount);
    // Cost, status and pricing: the latest known value wins; billing and model: the first.
    const common = {
      cost_status: sql<string>`COALESCE(${costStatus}::text, cost_status)`,
      cost_source: sql<string>`COALESCE(${costSource}::text, cost_source)`,
      pricing_version: sql<string>`COALESCE(${pricingVersion}::text, pricing_version)`,
      billing_provider: sql<string>`COALESCE(billing_provider, ${billingProvider}::text)`,
      billing_base_url: sql<string>`COALESCE(billing_base_url, ${billingBaseUrl}::text)`,
      billing_mode: sql<string>`COALESCE(billing_mode, ${billingMode}::text)`,
      model: sql<string>`COALESCE(model, ${model}::text)`,
    };
    await this.#write(async (db) => {
      const update = db.updateTable("sessions").where("id", "=", sid);
      if (u.absolute === true) {
        await update
          .set({
            input_tokens: inputTokens,
            output_tokens: output,
            cache_read_tokens: cacheRead,
            cache_write_tokens: cacheWrite,
            reasoning_tokens: reasoning,
            estimated_cost_usd: sql<number>`COALESCE(${estimated}::double precision, 0)`,
            actual_cost_usd: sql<number>`COALESCE(${actual}::double precision, actual_cost_usd)`,
            ...common,
            api_call_count: apiCalls,
          })
          .execute();
        return;
      }
      await update
        .set((eb) => ({
          input_tokens: eb("input_tokens", "+", inputTokens),
          output_tokens: eb("output_tokens", "+", output),
          cache_read_tokens: eb("cache_read_tokens", "+", cacheRead),
          cache_write_tokens: eb("cache_write_tokens", "+", cacheWrite),
          reasoning_tokens: eb("reasoning_tokens", "+", reasoning),
          estimated_cost_usd: sql<number>`COALESCE(estimated_cost_usd, 0) + COALESCE(${estimated}::double precision, 0)`,
          actual_cost_usd: sql<number>`CASE WHEN ${actual}::double precision IS NULL THEN actual_cost_usd
            ELSE COALESCE(actual_cost_usd, 0) + ${actual}::double precision END`,
          ...common,
          api_call_count: sql<number>`COALESCE(api_call_count, 0) + ${apiCalls}`,
        }))
        .execute();
    });
  }

  /** Every column of one session, or `null`. */
  async getSession(id: string): Promise<SessionRow | null> {
    const sid = requireId("id", id);
    return this.#read(async (db) => (await sessionById(db, sid)) ?? null);
  }

  /** An exact id, else the id that uniquely starts with `idOrPrefix`, else `null`. */
  async resolveSessionId(idOrPrefix: string): Promise<string | null> {
    const key = requireId("idOrPrefix", idOrPrefix);
    return this.#read(async (db) => {
      if (
        (await db.selectFrom("sessions").select("id").where("id", "=", key).executeTakeFirst()) !== undefined
      ) {
        return key;
      }
      // Backslash is LIKE's escape character in PostgreSQL, as escapeLike writes it.
      const rows = await db
        .selectFrom("sessions")
        .select("id")
        .where("id", "ilike", `${escapeLike(key)}%`)
        .orderBy("started_at", "desc")
        .limit(2)
        .execute();
      return rows.length === 1 ? (rows[0]?.id ?? null) : null;
    });
  }

  /** Number of sessions, of one source when given. */
  async sessionCount(o?: { source?: string }): Promise<number> {
    const source = optionalString("source", options("options", o).source);
    return this.#read(async (db) => {
      const row = await db
        .selectFrom("sessions")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .$if(Boolean(source), (qb) => qb.where("source", "=", source!))
        .executeTakeFirst();
      return row?.n ?? 0;
    });
  }

  /** Number of message rows, of one session when given. */
  async messageCount(o?: { sessionId?: string }): Promise<number> {
    const sessionId = optionalString("sessionId", options("options", o).sessionId);
    return this.#read(async (db) => {
      const row = await db
        .selectFrom("messages")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .$if(Boolean(sessionId), (qb) => qb.where("session_id", "=", sessionId!))
        .executeTakeFirst();
      return row?.n ?? 0;
    });
  }

  // Listing and lineage -------------------------------------------------------------------

  /** Sessions with `last_active`, most recently used first. */
  async searchSessions(o?: {
    source?: string;
    limit?: number;
    offset?: number;
  }): Promise<SessionWithLastActive[]> {
    const opts = options("options", o);
    const source = optionalString("source", opts.source);
    const limit = nonNegativeInt("limit", opts.limit, 20, MAX_LIMIT);
    const offset = nonNegativeInt("offset", opts.offset, 0);
    return this.#read(
      (db) =>
        db
          .selectFrom("sessions as s")
          .select(S_COLUMNS)
          .select((eb) => lastActive(eb))
          .$if(source !== null && source !== "", (qb) => qb.where("s.source", "=", source!))
          .orderBy("last_active", "desc")
          .orderBy("s.started_at", "desc")
          .orderBy(collateC("s.id"), "desc")
          .limit(limit)
          .offset(offset)
          .execute() as Promise<SessionWithLastActive[]>,
    );
  }

  /** Sessions for a picker with `last_active` and `preview` (see `@hermes/store`). */
  async listSessionsRich(o?: ListSessionsRichOptions): Promise<RichSessionRow[]> {
    const opts = options("options", o);
    const source = optionalString("source", opts.source);
    const exclude = optionalStringArray("excludeSources", opts.excludeSources);
    const includeChildren = flag("includeChildren", opts.includeChildren, false);
    const projectTips = flag("projectCompressionTips", opts.projectCompressionTips, true);
    const limit = nonNegativeInt("limit", opts.limit, 20, MAX_LIMIT);
    const offset = nonNegativeInt("offset", opts.offset, 0);
    const richQuery = (db: PgDb) =>
      db
        .selectFrom("sessions as s")
        .select(S_COLUMNS)
        .select((eb) => [lastActive(eb), PREVIEW_RAW.as("preview")]);
    return this.#read(async (db) => {
      const rows = (
        (await richQuery(db)
          .$if(!includeChildren, (qb) =>
            // Roots, and branches started after their parent ended (shown as sessions of their own).
            qb.where((eb) =>
              eb.or([
                eb("s.parent_session_id", "is", null),
                eb.exists(
                  eb
                    .selectFrom("sessions as p")
                    .select(sql.lit(1).as("one"))
                    .whereRef("p.id", "=", "s.parent_session_id")
                    .where("p.end_reason", "=", "branched")
                    .whereRef("s.started_at", ">=", "p.ended_at"),
                ),
              ]),
            ),
          )
          .$if(source !== null && source !== "", (qb) => qb.where("s.source", "=", source!))
          .$if(exclude !== null && exclude.length > 0, (qb) =>
            qb.where(sql<boolean>`NOT (s.source = ${anyText(exclude!)})`),
          )
          .orderBy("s.started_at", "desc")
          .limit(limit)
          .offset(offset)
          .execute()) as RawRich[]
      ).map(finishRich);
      if (!projectTips || includeChildren) return rows;
      const out: RichSessionRow[] = [];
      for (const row of rows) {
        if (row.end_reason !== "compression") {
          out.push(row);
          continue;
        }
        const tipId = await compressionTip(db, row.id);
        if (tipId === row.id) {
          out.push(row);
          continue;
        }
        const raw = (await richQuery(db).where("s.id", "=", tipId).executeTakeFirst()) as RawRich | undefined;
        if (raw === undefined) {
          out.push(row);
          continue;
        }
        const tip = finishRich(raw);
        const merged: Record<string, unknown> = { ...row };
        for (const key of TIP_FIELDS) merged[key] = tip[key];
        merged._lineage_root_id = row.id;
        out.push(merged as RichSessionRow);
      }
      return out;
    });
  }

  /** The latest session of `id`'s compression chain. */
  async getCompressionTip(id: string): Promise<string> {
    const sid = requireId("id", id);
    return this.#read((db) => compressionTip(db, sid));
  }

  /** The session a resume of `id` should load (first descendant with messages). */
  async resolveResumeSessionId(id: string): Promise<string> {
    const start = requireId("id", id);
    return this.#read(async (db) => {
      const hasMessages = async (sid: string) =>
        (await db
          .selectFrom("messages")
          .select("id")
          .where("session_id", "=", sid)
          .limit(1)
          .executeTakeFirst()) !== undefined;
      if (await hasMessages(start)) return start;
      const seen = new Set([start]);
      let current = start;
      for (let hop = 0; hop < 32; hop++) {
        const child = (
          await db
            .selectFrom("sessions")
            .select("id")
            .where("parent_session_id", "=", current)
            .orderBy("started_at", "desc")
            .orderBy(collateC("id"), "desc")
            .limit(1)
            .executeTakeFirst()
        )?.id;
        if (child === undefined || child === "" || seen.has(child)) return start;
        seen.add(child);
        if (await hasMessages(child)) return child;
        current = child;
      }
      return start;
    });
  }

  // Titles ----------------------------------------------------------------------------------

  /** Sets (or with `null`/blank, clears) a title; `false` for an unknown session. */
  async setSessionTitle(id: string, title: string | null): Promise<boolean> {
    const sessionId = requireId("id", id);
    const clean = sanitizeTitle(optionalString("title", title));
    return this.#write(async (db) => {
      if (clean !== null) {
        const holder = await db
          .selectFrom("sessions")
          .select("id")
          .where("title", "=", clean)
          .where("id", "<>", sessionId)
          .limit(1)
          .executeTakeFirst();
        if (holder !== undefined) throw new TitleConflictError(clean, holder.id);
      }
      try {
        const updated = await db
          .updateTable("sessions")
          .set({ title: clean })
          .where("id", "=", sessionId)
          .returning("id")
          .execute();
        return updated.length > 0;
      } catch (error) {
        // Another instance took the title between the check and the update (read outside
        // this transaction, which the violation aborted).
        if (clean !== null && isUniqueViolation(error, "idx_sessions_title_unique")) {
          const holder = await this.#db
            .selectFrom("sessions")
            .select("id")
            .where("title", "=", clean)
            .executeTakeFirst();
          throw new TitleConflictError(clean, holder?.id ?? "(another session)");
        }
        throw error;
      }
    });
  }

  /** The title of a session; `null` when it has none or does not exist. */
  async getSessionTitle(id: string): Promise<string | null> {
    const sid = requireId("id", id);
    return this.#read(
      async (db) =>
        (await db.selectFrom("sessions").select("title").where("id", "=", sid).executeTakeFirst())?.title ??
        null,
    );
  }

  /** The session whose title is exactly `title`, or `null`. */
  async getSessionByTitle(title: string): Promise<SessionRow | null> {
    const exact = titleArgument("title", title);
    return this.#read(
      async (db) =>
        ((await db
          .selectFrom("sessions")
          .select(SESSION_COLUMNS)
          .where("title", "=", exact)
          .executeTakeFirst()) as SessionRow | undefined) ?? null,
    );
  }

  /** Resolves a title to a session id, preferring the newest `<title> #n` continuation. */
  async resolveSessionByTitle(title: string): Promise<string | null> {
    const text = titleArgument("title", title);
    return this.#read(async (db) => {
      const variant = await db
        .selectFrom("sessions")
        .select("id")
        .where("title", "ilike", `${escapeLike(text)} #%`)
        .orderBy("started_at", "desc")
        .limit(1)
        .executeTakeFirst();
      if (variant !== undefined) return variant.id;
      return (
        (await db.selectFrom("sessions").select("id").where("title", "=", text).executeTakeFirst())?.id ??
        null
      );
    });
  }

  /** The next title of a lineage (`X` → `X #2`, `X #7` → `X #8`). */
  async getNextTitleInLineage(baseTitle: string): Promise<string> {
    const title = titleArgument("baseTitle", baseTitle);
    return this.#read((db) => nextTitleInLineage(db, title));
  }

  // Messages --------------------------------------------------------------------------------

  /** Appends a message and bumps the session's counters in one transaction; returns its id. */
  async appendMessage(m: AppendMessageInput): Promise<number> {
    const prepared = messageRowFor(m);
    return this.#write(async (db) => insertMessage(db, prepared, this.#now()));
  }

  /** Appends several messages all or none, in one transaction; returns their ids in order. */
  async appendMessages(batch: readonly AppendMessageInput[]): Promise<number[]> {
    if (!Array.isArray(batch)) {
      throw new InvalidArgumentError("messages", "appendMessages expects an array of messages");
    }
    if (batch.length > MAX_APPEND_BATCH) {
      throw new InvalidArgumentError(
        "messages",
        `appendMessages takes at most ${MAX_APPEND_BATCH} messages (got ${batch.length}); split the batch`,
      );
    }
    const prepared = batch.map((m) => messageRowFor(m));
    if (prepared.length === 0) return [];
    return this.#write(async (db) => {
      // Every session checked before any insert: a refused batch consumes no id.
      const wanted = [...new Set(prepared.map((p) => p.row.session_id))];
      const found = new Set(
        (
          await db
            .selectFrom("sessions")
            .select("id")
            .where("id", "=", anyText(wanted))
            .forKeyShare()
            .execute()
        ).map((r) => r.id),
      );
      const missing = wanted.find((id) => !found.has(id));
      if (missing !== undefined) {
        throw new SessionNotFoundError(missing, `appendMessage: session ${missing} does not exist`);
      }
      const ids: number[] = [];
      for (const p of prepared) ids.push(await insertMessage(db, p, this.#now()));
      return ids;
    });
  }

  /** Every message of a session, ordered by (timestamp, id), with `tool_calls` parsed. */
  async getMessages(sessionId: string): Promise<MessageRow[]> {
    const id = requireId("sessionId", sessionId);
    return this.#read(async (db) => (await messagesOf(db, id)).map(toMessageRow));
  }

  /** The conversation in the OpenAI chat shape, optionally with its ancestors. */
  async getMessagesAsConversation(
    sessionId: string,
    o?: { includeAncestors?: boolean },
  ): Promise<ConversationMessage[]> {
    const id = requireId("sessionId", sessionId);
    const includeAncestors = options("options", o).includeAncestors;
    if (includeAncestors !== undefined && typeof includeAncestors !== "boolean") {
      throw new InvalidArgumentError("includeAncestors", "includeAncestors must be a boolean");
    }
    return this.#snapshot((db) => conversationOf(db, id, includeAncestors === true));
  }

  /** Deletes a session's messages and resets its message and tool-call counters. */
  async clearMessages(sessionId: string): Promise<void> {
    const id = requireId("sessionId", sessionId);
    await this.#write(async (db) => {
      await db.deleteFrom("messages").where("session_id", "=", id).execute();
      await db
        .updateTable("sessions")
        .set({ message_count: 0, tool_call_count: 0 })
        .where("id", "=", id)
        .execute();
    });
  }

  // Search ----------------------------------------------------------------------------------

  /**
   * Full-text search with the SQLite store's syntax and rules: words through the `tsvector`
   * GIN index (ranked, `>>>`/`<<<` snippets), CJK through substring search on the pg_trgm
   * GIN index (newest first, 120-character excerpts).
   */
  async searchMessages(query: string, o?: SearchMessagesOptions): Promise<SearchHit[]> {
    const { plan, sourceFilter, excludeSources, roleFilter, limit, offset } = searchArguments(query, o);
    if (plan.kind === "empty") return [];
    if (sourceFilter !== null && sourceFilter.length === 0) return [];
    this.#check();

    const built = await this.#read((db) => this.#searchQuery(db, query, plan));
    if (built === null) return [];
    return this.#read(async (db) => {
      const rows = await db
        .selectFrom("messages as m")
        .innerJoin("sessions as s", "s.id", "m.session_id")
        .$if(built.lateral.length > 0, (qb) =>
          // Each term's frequency in the row, computed once: an aggregate over the unnested
          // vector (count(*) keeps it one for a vector cut down to nothing), whose phrase
          // columns are functions of the row evaluated in that single result row.
          qb.innerJoinLateral(
            db
              .selectFrom(sql`unnest(${built.lateralVector})`.as("u"))
              .select([sql<number>`count(*)`.as("lexemes"), ...built.lateral.map((f, i) => f.as(`f${i}`))])
              .as("fq"),
            (join) => join.onTrue(),
          ),
        )
        .select([
          "m.id",
          "m.session_id",
          "m.role",
          "m.content",
          "m.tool_calls",
          "m.timestamp",
          "m.tool_name",
          "s.source",
          "s.model",
          "s.started_at as session_started",
        ])
        .where(built.where)
        .$if(sourceFilter !== null, (qb) => qb.where("s.source", "=", anyText(sourceFilter!)))
        .$if(excludeSources !== null && excludeSources.length > 0, (qb) =>
          qb.where(sql<boolean>`NOT (s.source = ${anyText(excludeSources!)})`),
        )
        .$if(roleFilter !== null && roleFilter.length > 0, (qb) =>
          qb.where("m.role", "=", anyText(roleFilter!)),
        )
        .$if(built.score !== null, (qb) =>
          qb.select(built.score!.as("score")).orderBy(sql.ref("score"), "desc").orderBy("m.id"),
        )
        // Substring (CJK) matches come newest first; ties as the SQLite store orders them (the
        // reference's own plan): by id ascending, or with a source filter by source, then id
        // descending (SQLite also orders by the session's rowid there, which PostgreSQL lacks).
        .$if(built.score === null && sourceFilter === null, (qb) =>
          qb.orderBy("m.timestamp", "desc").orderBy("m.id", "asc"),
        )
        .$if(built.score === null && sourceFilter !== null, (qb) =>
          qb.orderBy("m.timestamp", "desc").orderBy(collateC("s.source")).orderBy("m.id", "desc"),
        )
        .limit(limit)
        .offset(offset)
        .execute();
      const contexts = await searchContexts(
        db,
        rows.map((r) => r.id),
      );
      return rows.map((row, i) => {
        const columns = [row.content, row.tool_calls, row.tool_name];
        const snippet =
          built.ranked !== null
            ? fts5Snippet(columns, built.ranked.phrases, built.ranked.tokenize)
            : substringExcerpt(columns, built.needles);
        return {
          id: row.id,
          session_id: row.session_id,
          role: row.role,
          snippet,
          timestamp: row.timestamp,
          tool_name: row.tool_name,
          source: row.source,
          model: row.model,
          session_started: row.session_started,
          context: contexts[i] ?? [],
        };
      });
    });
  }

  /** Row count and total document size of the corpus, for bm25 (exact, or cached for a minute on large tables). */
  async #corpus(db: PgDb, kind: "words" | "trigrams"): Promise<{ rows: number; size: number }> {
    const cached = this.#corpusCache[kind];
    // Exact on small tables (where one message changes the ranking visibly); on large ones
    // the figures move slowly, and a minute-old value keeps each search from scanning them.
    if (cached !== undefined && cached.rows > 50_000 && performance.now() - cached.at < 60_000) return cached;
    const row = await db
      .selectFrom("messages")
      .select((eb) => [
        eb.fn.countAll<number>().as("rows"),
        eb.fn
          .coalesce(eb.fn.sum<number>(kind === "words" ? "search_tokens" : "search_trigrams"), sql.lit(0))
          .as("size"),
      ])
      .executeTakeFirst();
    const fresh = { rows: row?.rows ?? 0, size: row?.size ?? 0, at: performance.now() };
    this.#corpusCache[kind] = fresh;
    return fresh;
  }

  /**
   * The condition and score of a search: ranked plans score rows with FTS5's bm25 (k1 1.2,
   * b 0.75, whole-row sizes), CJK substring plans select with ILIKE on the pg_trgm index.
   */
  async #searchQuery(
    db: PgDb,
    query: string,
    plan: Exclude<ReturnType<typeof planSearch>, { kind: "empty" }>,
  ): Promise<{
    where: Expression<boolean>;
    score: RawBuilder<number> | null;
    /** Per-row term frequencies over `unnest(lateralVector) u`, joined laterally as `fq.f0…`. */
    lateral: RawBuilder<number>[];
    lateralVector: RawBuilder<unknown>;
    ranked: { phrases: Phrase[]; tokenize: typeof wordTokensAt } | null;
    needles: readonly string[];
  } | null> {
    const count = async (where: Expression<boolean>) =>
      (
        await db
          .selectFrom("messages as m")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where(where)
          .executeTakeFirst()
      )?.n ?? 0;
    if (plan.kind === "ranked" && plan.index === "messages_fts") {
      const tree = parseFtsQuery(query);
      const tsq = tree === null ? null : tsqueryLiteral(tree);
      if (tree === null || tsq === null) return null;
      const phrases = queryPhrases(tree);
      const corpus = await this.#corpus(db, "words");
      const avgdl = corpus.rows > 0 ? corpus.size / corpus.rows || 1 : 1;
      const terms: RawBuilder<number>[] = [];
      const lateral: RawBuilder<number>[] = [];
      // Frequencies are read from the row's vector cut down to the query's words (ts_filter of
      // the words marked with weight A; stored vectors carry no weights): the same positions,
      // without unnesting every word of the message. Prefix terms need the whole vector.
      const only = (words: readonly string[]) =>
        sql`ts_filter(setweight(m.search_vector, 'A', ${words}::text[]), '{a}')`;
      const singles = phrases.filter((p) => p.words.length === 1);
      const lateralVector = singles.some((p) => p.prefix)
        ? sql`m.search_vector`
        : only(singles.map((p) => p.words[0]!));
      for (const p of phrases) {
        const literal = p.words
          .map((w, i) => `'${w}'${p.prefix && i === p.words.length - 1 ? ":*" : ""}`)
          .join(" <-> ");
        const hits = await count(sql<boolean>`m.search_vector @@ ${literal}::tsquery`);
        if (p.words.length === 1) {
          const word = p.words[0]!;
          const test = p.prefix ? sql`starts_with(u.lexeme, ${word}::text)` : sql`u.lexeme = ${word}::text`;
          lateral.push(sql<number>`COALESCE(SUM(cardinality(u.positions)) FILTER (WHERE ${test}), 0)`);
        } else {
          // A phrase's occurrences: a function of the row, evaluated once in the lateral row.
          const vector = p.prefix ? sql`m.search_vector` : only(p.words);
          lateral.push(sql<number>`hermes_phrase_freq(${vector}, ${p.words}::text[], ${p.prefix}::boolean)`);
        }
        const f = sql<number>`${sql.ref(`fq.f${lateral.length - 1}`)}`;
        terms.push(bm25Term(bm25Idf(corpus.rows, hits), f, sql`COALESCE(m.search_tokens, 0)`, avgdl));
      }
      return {
        where: sql<boolean>`m.search_vector @@ ${tsq}::tsquery`,
        score: terms.length > 0 ? sql<number>`(${sql.join(terms, sql` + `)})` : sql<number>`(0)`,
        lateral,
        lateralVector,
        ranked: { phrases, tokenize: wordTokensAt },
        needles: [],
      };
    }
    const sanitized = sanitizeFts5Query(query);
    const tree = parseQueryTokens(lexCjkQuery(sanitized));
    if (tree === null || pyStrip(sanitized).length === 0) return null;
    const condition = substringCondition(tree);
    if (plan.kind === "ranked") {
      // Three or more CJK characters, every term long enough for the trigram index: ranked.
      const texts = queryTerms(tree).map((t) => t.text);
      const phrases = trigramPhrases(texts);
      const corpus = await this.#corpus(db, "trigrams");
      const avgdl = corpus.rows > 0 ? corpus.size / corpus.rows || 1 : 1;
      const doc = sql`lower(${sql.raw(SEARCH_DOCUMENT_SQL)})`;
      const terms: RawBuilder<number>[] = [];
      for (const text of texts) {
        const hits = await count(substringCondition({ kind: "term", text, prefix: false }));
        const n = sql`${text.toLowerCase()}::text`;
        // Occurrences of the term in the row: how much shorter the text gets without it.
        const f = sql<number>`((char_length(${doc}) - char_length(replace(${doc}, ${n}, ''))) / GREATEST(char_length(${n}), 1))`;
        terms.push(bm25Term(bm25Idf(corpus.rows, hits), f, sql`COALESCE(m.search_trigrams, 0)`, avgdl));
      }
      return {
        where: condition,
        score: sql<number>`(${sql.join(terms, sql` + `)})`,
        lateral: [],
        lateralVector: sql`m.search_vector`,
        ranked: { phrases, tokenize: trigramTokens },
        needles: [],
      };
    }
    return {
      where: condition,
      score: null,
      lateral: [],
      lateralVector: sql`m.search_vector`,
      ranked: null,
      needles: positiveTerms(tree).map((t) => t.text),
    };
  }

  /** State of the search index: rows whose `search_vector` is missing count as damage. */
  async verifySearchIndex(): Promise<SearchIndexReport> {
    return this.#read(async (db) => {
      const missing =
        (
          await db
            .selectFrom("messages")
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .where("search_vector", "is", null)
            .executeTakeFirst()
        )?.n ?? 0;
      const indexes = (
        await sql<{ indexname: string }>`SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()
          AND indexname IN ('idx_messages_search_vector', 'idx_messages_search_trgm')`.execute(db)
      ).rows.map((r) => r.indexname);
      const status = (name: string, kind: "unicode61" | "trigram") => {
        if (!indexes.includes(name))
          return { name, kind, status: "missing" as const, detail: `index ${name} does not exist` };
        if (kind === "unicode61" && missing > 0)
          return {
            name,
            kind,
            status: "damaged" as const,
            detail: `${missing} messages have no search vector`,
          };
        return { name, kind, status: "ok" as const };
      };
      const list = [
        status("idx_messages_search_vector", "unicode61"),
        status("idx_messages_search_trgm", "trigram"),
      ];
      return { ok: list.every((s) => s.status === "ok"), indexes: list };
    });
  }

  /** Recomputes every message's search vector, in transactions of 1,000 messages. */
  async rebuildSearchIndex(o?: { onProgress?: (progress: SearchIndexProgress) => void }): Promise<void> {
    const opts = options("options", o);
    if (opts.onProgress !== undefined && typeof opts.onProgress !== "function") {
      throw new InvalidArgumentError("onProgress", "onProgress must be a function");
    }
    const total = await this.messageCount();
    let after = 0;
    let done = 0;
    for (;;) {
      const n = await this.#write(async (db) => {
        const rows = await db
          .selectFrom("messages")
          .select(["id", "content", "tool_calls", "tool_name"])
          .where("id", ">", after)
          .orderBy("id")
          .limit(1000)
          .execute();
        for (const r of rows) {
          await db
            .updateTable("messages")
            .set({
              search_vector: sql<string>`${searchVectorLiteral(r.content, r.tool_calls, r.tool_name)}::tsvector`,
              search_tokens: searchTokenCount(r.content, r.tool_calls, r.tool_name),
              search_trigrams: searchTrigramCount(r.content, r.tool_calls, r.tool_name),
            })
            .where("id", "=", r.id)
            .execute();
        }
        if (rows.length > 0) after = rows[rows.length - 1]!.id;
        return rows.length;
      });
      done += n;
      opts.onProgress?.({ index: "idx_messages_search_vector", done, total });
      if (n < 1000) return;
    }
  }

  // Export, retention, metadata -----------------------------------------------------------

  /** A session with all its messages, or `null`. */
  async exportSession(id: string): Promise<SessionExport | null> {
    const sid = requireId("id", id);
    return this.#snapshot(async (db) => {
      const session = await sessionById(db, sid);
      if (session === undefined) return null;
      const messages = (await messagesOf(db, sid)).map(toMessageRow);
      return { ...session, messages };
    });
  }

  /** Every session (or one source's) with its messages, most recently active first. */
  async exportAll(o?: {
    source?: string;
  }): Promise<Array<SessionWithLastActive & { messages: MessageRow[] }>> {
    const source = optionalString("source", options("options", o).source);
    return this.#snapshot(async (db) => {
      const rows = (await db
        .selectFrom("sessions as s")
        .leftJoin(
          (eb) =>
            eb
              .selectFrom("messages")
              .select((e) => ["session_id", e.fn.max("timestamp").as("last_active")])
              .groupBy("session_id")
              .as("m"),
          (join) => join.onRef("m.session_id", "=", "s.id"),
        )
        .select(S_COLUMNS)
        .select((eb) => eb.fn.coalesce("m.last_active", "s.started_at").as("last_active"))
        .$if(source !== null && source !== "", (qb) => qb.where("s.source", "=", source!))
        .orderBy("last_active", "desc")
        .orderBy("s.started_at", "desc")
        .orderBy(collateC("s.id"), "desc")
        .limit(EXPORT_ALL_LIMIT)
        .execute()) as SessionWithLastActive[];
      const out: Array<SessionWithLastActive & { messages: MessageRow[] }> = [];
      for (const row of rows) {
        const messages = (await messagesOf(db, row.id)).map(toMessageRow);
        out.push({ ...row, messages });
      }
      return out;
    });
  }

  /** Deletes a session and its messages, orphaning its children; `false` when unknown. */
  async deleteSession(id: string, o?: { sessionsDir?: string }): Promise<boolean> {
    const sid = requireId("id", id);
    const dir = sessionsDirOf(options("options", o).sessionsDir);
    const deleted = await this.#write(async (db) => {
      const found = await db
        .selectFrom("sessions")
        .select("id")
        .where("id", "=", sid)
        .forUpdate()
        .executeTakeFirst();
      if (found === undefined) return false;
      await db
        .updateTable("sessions")
        .set({ parent_session_id: null })
        .where("parent_session_id", "=", sid)
        .execute();
      await db.deleteFrom("messages").where("session_id", "=", sid).execute();
      await db.deleteFrom("sessions").where("id", "=", sid).execute();
      return true;
    });
    if (deleted && dir !== null) await removeSessionFiles(dir, [sid]);
    return deleted;
  }

  /** Deletes ended sessions older than `olderThanDays` (default 90); returns how many. */
  async pruneSessions(o?: {
    olderThanDays?: number;
    source?: string;
    sessionsDir?: string;
  }): Promise<number> {
    const opts = options("options", o);
    const days = duration("olderThanDays", opts.olderThanDays, 90);
    const source = optionalString("source", opts.source);
    const dir = sessionsDirOf(opts.sessionsDir);
    const removed = await this.#write(async (db) => {
      const cutoff = this.#now() - days * 86_400;
      const ids = (
        await db
          .selectFrom("sessions")
          .select("id")
          .where("started_at", "<", cutoff)
          .where("ended_at", "is not", null)
          .$if(source !== null, (qb) => qb.where("source", "=", source!))
          .forUpdate()
          .execute()
      ).map((r) => r.id);
      if (ids.length === 0) return [];
      await db
        .updateTable("sessions")
        .set({ parent_session_id: null })
        .where("parent_session_id", "=", anyText(ids))
        .execute();
      await db.deleteFrom("messages").where("session_id", "=", anyText(ids)).execute();
      await db.deleteFrom("sessions").where("id", "=", anyText(ids)).execute();
      return ids;
    });
    if (dir !== null) await removeSessionFiles(dir, removed);
    return removed.length;
  }

  /** The value stored under `key` in `state_meta`, or `null`. */
  async getMeta(key: string): Promise<string | null> {
    const k = requireId("key", key);
    return this.#read(
      async (db) =>
        (await db.selectFrom("state_meta").select("value").where("key", "=", k).executeTakeFirst())?.value ??
        null,
    );
  }

  /** Stores `value` under `key` in `state_meta`. */
  async setMeta(key: string, value: string): Promise<void> {
    const k = requireId("key", key);
    if (typeof value !== "string") throw new InvalidArgumentError("value", "value must be a string");
    await this.#write(async (db) => {
      await db
        .insertInto("state_meta")
        .values({ key: k, value })
        .onConflict((oc) => oc.column("key").doUpdateSet((eb) => ({ value: eb.ref("excluded.value") })))
        .execute();
    });
  }

  /**
   * PostgreSQL's equivalent of SQLite's `VACUUM`: `VACUUM (ANALYZE)` of the store's tables,
   * which makes the space of deleted rows reusable and refreshes the planner's statistics
   * (it does not shrink the files; `VACUUM FULL` would lock the tables). Queued after the
   * store's earlier writes, outside a transaction.
   */
  async vacuum(): Promise<void> {
    await this.#write(
      async (db) => {
        await sql`VACUUM (ANALYZE) sessions, messages, state_meta`.execute(db);
      },
      { transaction: false },
    );
  }

  /** Startup housekeeping: prune (and vacuum) at most once per `minIntervalHours`. Never throws. */
  maybeAutoPruneAndVacuum(o?: AutoPruneOptions): Promise<AutoPruneResult> {
    return runAutoPrune(
      {
        getMeta: (key) => this.getMeta(key),
        setMeta: (key, value) => this.setMeta(key, value),
        prune: (options) => this.pruneSessions(options),
        vacuum: () => this.vacuum(),
        now: () => this.#now(),
      },
      o,
    );
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

  /** A page of sessions, most recently active chain first (see `@hermes/store`). */
  async listSessionPage(o?: SessionPageOptions): Promise<SessionPage> {
    const args = sessionPageArguments(o);
    return this.#read((db) => pgSessionPage(db, args));
  }

  /** A page of a session's messages with the counts before and after it (see `@hermes/store`). */
  async getMessagePage(sessionId: string, o?: MessagePageOptions): Promise<MessagePage> {
    const args = messagePageArguments(sessionId, o);
    return this.#snapshot((db) => pgMessagePage(db, MESSAGE_COLUMNS, args));
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

// Helpers -----------------------------------------------------------------------------------

function finishRich(row: RawRich): RichSessionRow {
  (row as unknown as RichSessionRow).preview = previewOf(row.preview);
  return row as unknown as RichSessionRow;
}

/** One session's columns, or `undefined`. */
async function sessionById(db: PgDb, id: string): Promise<SessionRow | undefined> {
  return (await db.selectFrom("sessions").select(SESSION_COLUMNS).where("id", "=", id).executeTakeFirst()) as
    | SessionRow
    | undefined;
}

/** A session's messages in conversation order, every stored column but the search ones. */
function messagesOf(db: PgDb, sessionId: string): Promise<StoredMessageRow[]> {
  return db
    .selectFrom("messages")
    .select(MESSAGE_COLUMNS)
    .where("session_id", "=", sessionId)
    .orderBy("timestamp")
    .orderBy("id")
    .execute();
}

/** A number written into the SQL text (constants of the ranking, never user input). */
const num = (value: number) => sql.raw(String(value));

/** One term of bm25: `idf · f·(k1+1) / (f + k1·(1 − b + b·size/avgdl))`. */
function bm25Term(
  idf: number,
  f: RawBuilder<number>,
  size: RawBuilder<unknown>,
  avgdl: number,
): RawBuilder<number> {
  return sql<number>`${num(idf)} * (${f} * ${num(BM25_K1 + 1)}) / (${f} + ${num(BM25_K1)} * (${num(1 - BM25_B)} + ${num(BM25_B)} * ${size} / ${num(avgdl)}::double precision))`;
}

async function compressionTip(db: PgDb, id: string): Promise<string> {
  let current = id;
  for (let hop = 0; hop < 100; hop++) {
    const parent = current;
    const next = await db
      .selectFrom("sessions as c")
      .select("c.id")
      .where("c.parent_session_id", "=", parent)
      .where("c.started_at", ">=", (eb) =>
        eb
          .selectFrom("sessions as p")
          .select("p.ended_at")
          .where("p.id", "=", parent)
          .where("p.end_reason", "=", "compression"),
      )
      .orderBy("c.started_at", "desc")
      .limit(1)
      .executeTakeFirst();
    if (next === undefined) return current;
    current = next.id;
  }
  return current;
}

async function nextTitleInLineage(db: PgDb, title: string): Promise<string> {
  const base = lineageBase(title);
  const existing = await db
    .selectFrom("sessions")
    .select("title")
    .where((eb) => eb.or([eb("title", "=", base), eb("title", "ilike", `${escapeLike(base)} #%`)]))
    .execute();
  return nextLineageTitle(base, existing);
}

async function insertMessage(
  db: PgDb,
  { row, toolCallDelta }: ReturnType<typeof messageRowFor>,
  now: number,
): Promise<number> {
  // Checked first (and the row share-locked against a concurrent delete) so that a refused
  // append consumes no id: ids then follow the SQLite store's, which reuses rolled-back ids.
  const session = await db
    .selectFrom("sessions")
    .select("id")
    .where("id", "=", row.session_id)
    .forKeyShare()
    .executeTakeFirst();
  if (session === undefined) {
    throw new SessionNotFoundError(row.session_id, `appendMessage: session ${row.session_id} does not exist`);
  }
  let id: number;
  try {
    const inserted = await db
      .insertInto("messages")
      .values({
        session_id: row.session_id,
        role: row.role,
        content: row.content,
        tool_call_id: row.tool_call_id,
        tool_calls: row.tool_calls,
        tool_name: row.tool_name,
        timestamp: now,
        token_count: row.token_count,
        finish_reason: row.finish_reason,
        reasoning: row.reasoning,
        reasoning_content: row.reasoning_content,
        reasoning_details: row.reasoning_details,
        codex_reasoning_items: row.codex_reasoning_items,
        codex_message_items: row.codex_message_items,
        search_vector: sql<string>`${searchVectorLiteral(row.content, row.tool_calls, row.tool_name)}::tsvector`,
        search_tokens: searchTokenCount(row.content, row.tool_calls, row.tool_name),
        search_trigrams: searchTrigramCount(row.content, row.tool_calls, row.tool_name),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    id = inserted.id;
  } catch (error) {
    throw foreignKeyToNotFound(error, row.session_id, "appendMessage");
  }
  await db
    .updateTable("sessions")
    .set((eb) => ({
      message_count: eb("message_count", "+", 1),
      tool_call_count: eb("tool_call_count", "+", toolCallDelta),
    }))
    .where("id", "=", row.session_id)
    .execute();
  return id;
}

async function conversationOf(
  db: PgDb,
  id: string,
  includeAncestors: boolean,
): Promise<ConversationMessage[]> {
  let chain = [id];
  if (includeAncestors) {
    chain = [];
    const seen = new Set<string>();
    let current: string | null = id;
    for (let hop = 0; hop < MAX_LINEAGE_HOPS; hop++) {
      if (current === null || current === "" || seen.has(current)) break;
      seen.add(current);
      chain.push(current);
      const row: { parent_session_id: string | null } | undefined = await db
        .selectFrom("sessions")
        .select("parent_session_id")
        .where("id", "=", current)
        .executeTakeFirst();
      if (row === undefined) break;
      current = row.parent_session_id;
    }
  }
  const rows = await db
    .selectFrom("messages")
    .select(REPLAY_COLUMNS)
    .$if(includeAncestors, (qb) => qb.where("session_id", "=", anyText(chain)))
    .$if(!includeAncestors, (qb) => qb.where("session_id", "=", id))
    .orderBy("timestamp")
    .orderBy("id")
    .execute();
  const messages: ConversationMessage[] = [];
  for (const row of rows) {
    const msg = toConversationMessage(row);
    if (includeAncestors && isReplayedUserPrompt(messages, msg)) continue;
    messages.push(msg);
  }
  return messages;
}

/**
 * Context of every hit in one query: the previous message of the same session by
 * `(timestamp, id)`, the hit, the next one; contents cut to 200 characters (code points).
 */
async function searchContexts(
  db: PgDb,
  ids: readonly number[],
): Promise<Array<Array<{ role: string; content: string }>>> {
  if (ids.length === 0) return [];
  try {
    const { rows } = await sql<{
      ord: number;
      prole: string | null;
      pcontent: string | null;
      role: string;
      content: string | null;
      nrole: string | null;
      ncontent: string | null;
    }>`SELECT h.ord, p.role AS prole, left(p.content, 200) AS pcontent, t.role, left(t.content, 200) AS content,
          n.role AS nrole, left(n.content, 200) AS ncontent
       FROM unnest(${ids}::bigint[]) WITH ORDINALITY AS h(id, ord)
       JOIN messages t ON t.id = h.id
       LEFT JOIN LATERAL (SELECT m.role, m.content FROM messages m WHERE m.session_id = t.session_id
           AND (m.timestamp, m.id) < (t.timestamp, t.id) ORDER BY m.timestamp DESC, m.id DESC LIMIT 1) p ON true
       LEFT JOIN LATERAL (SELECT m.role, m.content FROM messages m WHERE m.session_id = t.session_id
           AND (m.timestamp, m.id) > (t.timestamp, t.id) ORDER BY m.timestamp, m.id LIMIT 1) n ON true`.execute(
      db,
    );
    const out: Array<Array<{ role: string; content: string }>> = ids.map(() => []);
    for (const r of rows) {
      const context: Array<{ role: string; content: string }> = [];
      if (r.prole !== null) context.push({ role: r.prole, content: firstCodePoints(r.pcontent ?? "", 200) });
      context.push({ role: r.role, content: firstCodePoints(r.content ?? "", 200) });
      if (r.nrole !== null) context.push({ role: r.nrole, content: firstCodePoints(r.ncontent ?? "", 200) });
      out[r.ord - 1] = context;
    }
    return out;
  } catch {
    return ids.map(() => []);
  }
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
