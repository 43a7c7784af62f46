import type { SessionRow, MessageRow as StoredMessageRow } from "@hermes/schema";
import {
  firstCodePoints,
  lexCjkQuery,
  parseFtsQuery,
  parseQueryTokens,
  planSearch,
  positiveTerms,
  pyStrip,
  queryTerms,
  SEARCH_LIMITS,
  type SearchIndexProgress,
  type SearchIndexReport,
  sanitizeFts5Query,
  searchLimitViolation,
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
  decimalValue,
  duration,
  type EnsureSessionInput,
  EXPORT_ALL_LIMIT,
  type ExportReport,
  type ExportStreamOptions,
  escapeLike,
  estimateTokens,
  exportFilter,
  type ForkSessionOptions,
  type ImportReport,
  type ImportSessionsOptions,
  type ImportSource,
  InvalidArgumentError,
  type IterMessagesOptions,
  integer,
  isReplayedUserPrompt,
  type JsonlDestination,
  jsonIfTruthy,
  jsonlHeader,
  LAST_AUTO_PRUNE_KEY,
  LAST_NUMBER,
  type Lineage,
  type LineageLinkKind,
  type LineageNode,
  type ListSessionsRichOptions,
  MAX_APPEND_BATCH,
  MAX_LIMIT,
  MAX_LINEAGE_HOPS,
  type MessageRow,
  messageRowFor,
  NUMBERED_SUFFIX,
  newSessionId,
  nonNegativeInt,
  optionalNumber,
  optionalString,
  optionalStringArray,
  options,
  type PortableSession,
  parsePythonFloat,
  previewOf,
  pythonFloatText,
  type RichSessionRow,
  removeSessionFiles,
  requireId,
  type SearchHit,
  type SearchMessagesOptions,
  type SessionExport,
  SessionNotFoundError,
  type SessionStoreApi,
  type SessionWithLastActive,
  StoreClosedError,
  type StoreStats,
  sanitizeTitle,
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
  type WindowRow,
} from "@hermes/store";
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
  foreignKeyToNotFound,
  isUniqueViolation,
  mapPgError,
  PgWriter,
  type Query,
  queryOn,
} from "./pg-database.js";
import { importIntoPg } from "./pg-import.js";
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

const SESSION_COLS =
  "id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at, ended_at, end_reason, message_count, tool_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, billing_provider, billing_base_url, billing_mode, estimated_cost_usd, actual_cost_usd, cost_status, cost_source, pricing_version, title, api_call_count";
const sCols = (alias: string) =>
  SESSION_COLS.split(", ")
    .map((c) => `${alias}.${c}`)
    .join(", ");
const MESSAGE_COLS =
  "id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items";

const LAST_ACTIVE =
  "COALESCE((SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id), s.started_at)";
const PREVIEW_RAW = `COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, E'\\n', ' '), E'\\r', ' '), 1, 63)
   FROM messages m WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
   ORDER BY m.timestamp, m.id LIMIT 1), '')`;

/** Python-style boolean option. */
function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "boolean") throw new InvalidArgumentError(name, `${name} must be a boolean`);
  return value;
}

const INSERT_MESSAGE_SQL = `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name,
    timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details,
    codex_reasoning_items, codex_message_items, search_vector, search_tokens, search_trigrams)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::tsvector, $16, $17) RETURNING id`;

type RawRich = SessionRow & { last_active: number; preview: unknown };

/**
 * The session store on PostgreSQL: every method of `@hermes/store`'s `SessionStore`, with the
 * same rows, values and errors. Open it with {@link openPostgresSessionStore}.
 */
export class PostgresSessionStore implements SessionStoreApi {
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #writer: PgWriter;
  readonly #q: Query;
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
    deadlineMs: number,
    migration: PgMigrationReport,
    clock: () => number,
  ) {
    this.#pool = pool;
    this.#ownsPool = ownsPool;
    this.#writer = new PgWriter(pool, deadlineMs);
    this.#q = queryOn(pool);
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

  async #read<T>(fn: (q: Query) => Promise<T>): Promise<T> {
    this.#check();
    const p = fn(this.#q).catch((error: unknown) => {
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
  async #snapshot<T>(fn: (q: Query) => Promise<T>): Promise<T> {
    return this.#read(async () => {
      const client = await this.#pool.connect();
      try {
        await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
        const result = await fn(queryOn(client));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    });
  }

  #write<T>(fn: (q: Query, client: pg.PoolClient) => Promise<T>, o?: { transaction?: boolean }): Promise<T> {
    this.#check();
    return this.#writer.run(fn, o);
  }

  // Sessions ------------------------------------------------------------------------------

  /** Creates a session; an existing id is left as it is (first write wins). Returns the id. */
  async createSession(input: CreateSessionInput): Promise<string> {
    const s = options("session", input);
    const id = requireId("id", s.id);
    const source = requireId("source", s.source);
    const parent = optionalString("parentSessionId", s.parentSessionId);
    if (
      s.modelConfig !== undefined &&
      s.modelConfig !== null &&
      (typeof s.modelConfig !== "object" || Array.isArray(s.modelConfig))
    ) {
      throw new InvalidArgumentError("modelConfig", "modelConfig must be an object or null");
    }
    let modelConfig: string | null;
    try {
      modelConfig = jsonIfTruthy(s.modelConfig);
    } catch (error) {
      throw new InvalidArgumentError(
        "modelConfig",
        `modelConfig cannot be stored as JSON: ${(error as Error).message}`,
      );
    }
    const values = [
      id,
      source,
      optionalString("userId", s.userId),
      optionalString("model", s.model),
      modelConfig,
      optionalString("systemPrompt", s.systemPrompt),
      parent,
    ];
    await this.#write(async (q) => {
      try {
        await q(
          `INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
          [...values, this.#now()],
        );
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
    await this.#write(async (q) => {
      await q(
        "INSERT INTO sessions (id, source, model, started_at) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING",
        [id, source, model, this.#now()],
      );
    });
  }

  /** Marks a session ended; the first end wins. */
  async endSession(id: string, endReason: string): Promise<void> {
    const args = [requireId("id", id), requireId("endReason", endReason)];
    await this.#write(async (q) => {
      await q("UPDATE sessions SET ended_at = $3, end_reason = $2 WHERE id = $1 AND ended_at IS NULL", [
        ...args,
        this.#now(),
      ]);
    });
  }

  /** Clears `ended_at` and `end_reason`. */
  async reopenSession(id: string): Promise<void> {
    const sid = requireId("id", id);
    await this.#write(async (q) => {
      await q("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = $1", [sid]);
    });
  }

  /** Replaces the system prompt snapshot. */
  async updateSystemPrompt(id: string, systemPrompt: string): Promise<void> {
    const args = [requireId("id", id), optionalString("systemPrompt", systemPrompt)];
    await this.#write(async (q) => {
      await q("UPDATE sessions SET system_prompt = $2 WHERE id = $1", args);
    });
  }

  /** Adds (or with `absolute`, sets) token, cost and API-call counters. */
  async updateTokenCounts(id: string, input: UpdateTokenCountsInput = {}): Promise<void> {
    const u = options("usage", input);
    if (u.absolute !== undefined && typeof u.absolute !== "boolean") {
      throw new InvalidArgumentError("absolute", "absolute must be a boolean");
    }
    const v = [
      requireId("id", id),
      integer("inputTokens", u.inputTokens),
      integer("outputTokens", u.outputTokens),
      integer("cacheReadTokens", u.cacheReadTokens),
      integer("cacheWriteTokens", u.cacheWriteTokens),
      integer("reasoningTokens", u.reasoningTokens),
      optionalNumber("estimatedCostUsd", u.estimatedCostUsd),
      optionalNumber("actualCostUsd", u.actualCostUsd),
      optionalString("costStatus", u.costStatus),
      optionalString("costSource", u.costSource),
      optionalString("pricingVersion", u.pricingVersion),
      optionalString("billingProvider", u.billingProvider),
      optionalString("billingBaseUrl", u.billingBaseUrl),
      optionalString("billingMode", u.billingMode),
      optionalString("model", u.model),
      integer("apiCallCount", u.apiCallCount),
    ];
    const common = `cost_status = COALESCE($9::text, cost_status), cost_source = COALESCE($10::text, cost_source),
      pricing_version = COALESCE($11::text, pricing_version), billing_provider = COALESCE(billing_provider, $12::text),
      billing_base_url = COALESCE(billing_base_url, $13::text), billing_mode = COALESCE(billing_mode, $14::text),
      model = COALESCE(model, $15::text)`;
    const sql =
      u.absolute === true
        ? `UPDATE sessions SET input_tokens = $2, output_tokens = $3, cache_read_tokens = $4, cache_write_tokens = $5,
            reasoning_tokens = $6, estimated_cost_usd = COALESCE($7::double precision, 0),
            actual_cost_usd = COALESCE($8::double precision, actual_cost_usd), ${common}, api_call_count = $16
           WHERE id = $1`
        : `UPDATE sessions SET input_tokens = input_tokens + $2, output_tokens = output_tokens + $3,
            cache_read_tokens = cache_read_tokens + $4, cache_write_tokens = cache_write_tokens + $5,
            reasoning_tokens = reasoning_tokens + $6,
            estimated_cost_usd = COALESCE(estimated_cost_usd, 0) + COALESCE($7::double precision, 0),
            actual_cost_usd = CASE WHEN $8::double precision IS NULL THEN actual_cost_usd
              ELSE COALESCE(actual_cost_usd, 0) + $8::double precision END,
            ${common}, api_call_count = COALESCE(api_call_count, 0) + $16
           WHERE id = $1`;
    await this.#write(async (q) => {
      await q(sql, v);
    });
  }

  /** Every column of one session, or `null`. */
  async getSession(id: string): Promise<SessionRow | null> {
    const sid = requireId("id", id);
    return this.#read(
      async (q) =>
        (await q<SessionRow>(`SELECT ${SESSION_COLS} FROM sessions WHERE id = $1`, [sid]))[0] ?? null,
    );
  }

  /** An exact id, else the id that uniquely starts with `idOrPrefix`, else `null`. */
  async resolveSessionId(idOrPrefix: string): Promise<string | null> {
    const key = requireId("idOrPrefix", idOrPrefix);
    return this.#read(async (q) => {
      if ((await q("SELECT 1 FROM sessions WHERE id = $1", [key])).length > 0) return key;
      const rows = await q<{ id: string }>(
        "SELECT id FROM sessions WHERE id ILIKE $1 ESCAPE '\\' ORDER BY started_at DESC LIMIT 2",
        [`${escapeLike(key)}%`],
      );
      return rows.length === 1 ? (rows[0]?.id ?? null) : null;
    });
  }

  /** Number of sessions, of one source when given. */
  async sessionCount(o?: { source?: string }): Promise<number> {
    const source = optionalString("source", options("options", o).source);
    return this.#read(async (q) => {
      const rows = source
        ? await q<{ n: number }>("SELECT COUNT(*) AS n FROM sessions WHERE source = $1", [source])
        : await q<{ n: number }>("SELECT COUNT(*) AS n FROM sessions");
      return rows[0]?.n ?? 0;
    });
  }

  /** Number of message rows, of one session when given. */
  async messageCount(o?: { sessionId?: string }): Promise<number> {
    const sessionId = optionalString("sessionId", options("options", o).sessionId);
    return this.#read(async (q) => {
      const rows = sessionId
        ? await q<{ n: number }>("SELECT COUNT(*) AS n FROM messages WHERE session_id = $1", [sessionId])
        : await q<{ n: number }>("SELECT COUNT(*) AS n FROM messages");
      return rows[0]?.n ?? 0;
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
    return this.#read((q) =>
      q<SessionWithLastActive>(
        `SELECT ${sCols("s")}, ${LAST_ACTIVE} AS last_active FROM sessions s
         WHERE ($3::text IS NULL OR $3::text = '' OR s.source = $3)
         ORDER BY last_active DESC, s.started_at DESC, s.id COLLATE "C" DESC LIMIT $1 OFFSET $2`,
        [limit, offset, source],
      ),
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
    const where: string[] = [];
    const params: unknown[] = [limit, offset];
    if (!includeChildren) {
      where.push(`(s.parent_session_id IS NULL OR EXISTS (SELECT 1 FROM sessions p
        WHERE p.id = s.parent_session_id AND p.end_reason = 'branched' AND s.started_at >= p.ended_at))`);
    }
    if (source !== null && source !== "") {
      params.push(source);
      where.push(`s.source = $${params.length}`);
    }
    if (exclude !== null && exclude.length > 0) {
      params.push(exclude);
      where.push(`NOT (s.source = ANY($${params.length}::text[]))`);
    }
    return this.#read(async (q) => {
      const rows = (
        await q<RawRich>(
          `SELECT ${sCols("s")}, ${LAST_ACTIVE} AS last_active, ${PREVIEW_RAW} AS preview FROM sessions s
           ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
           ORDER BY s.started_at DESC LIMIT $1 OFFSET $2`,
          params,
        )
      ).map(finishRich);
      if (!projectTips || includeChildren) return rows;
      const out: RichSessionRow[] = [];
      for (const row of rows) {
        if (row.end_reason !== "compression") {
          out.push(row);
          continue;
        }
        const tipId = await compressionTip(q, row.id);
        if (tipId === row.id) {
          out.push(row);
          continue;
        }
        const raw = (
          await q<RawRich>(
            `SELECT ${sCols("s")}, ${LAST_ACTIVE} AS last_active, ${PREVIEW_RAW} AS preview FROM sessions s WHERE s.id = $1`,
            [tipId],
          )
        )[0];
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
    return this.#read((q) => compressionTip(q, sid));
  }

  /** The session a resume of `id` should load (first descendant with messages). */
  async resolveResumeSessionId(id: string): Promise<string> {
    const start = requireId("id", id);
    return this.#read(async (q) => {
      const hasMessages = async (sid: string) =>
        (await q("SELECT 1 FROM messages WHERE session_id = $1 LIMIT 1", [sid])).length > 0;
      if (await hasMessages(start)) return start;
      const seen = new Set([start]);
      let current = start;
      for (let hop = 0; hop < 32; hop++) {
        const child = (
          await q<{ id: string }>(
            `SELECT id FROM sessions WHERE parent_session_id = $1 ORDER BY started_at DESC, id COLLATE "C" DESC LIMIT 1`,
            [current],
          )
        )[0]?.id;
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
    return this.#write(async (q) => {
      if (clean !== null) {
        const holder = (
          await q<{ id: string }>("SELECT id FROM sessions WHERE title = $1 AND id <> $2 LIMIT 1", [
            clean,
            sessionId,
          ])
        )[0];
        if (holder !== undefined) throw new TitleConflictError(clean, holder.id);
      }
      try {
        return (
          (
            await q<{ id: string }>("UPDATE sessions SET title = $2 WHERE id = $1 RETURNING id", [
              sessionId,
              clean,
            ])
          ).length > 0
        );
      } catch (error) {
        // Another instance took the title between the check and the update.
        if (clean !== null && isUniqueViolation(error, "idx_sessions_title_unique")) {
          const holder = (
            await this.#q<{ id: string }>("SELECT id FROM sessions WHERE title = $1", [clean])
          )[0];
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
      async (q) =>
        (await q<{ title: string | null }>("SELECT title FROM sessions WHERE id = $1", [sid]))[0]?.title ??
        null,
    );
  }

  /** The session whose title is exactly `title`, or `null`. */
  async getSessionByTitle(title: string): Promise<SessionRow | null> {
    const exact = titleArgument("title", title);
    return this.#read(
      async (q) =>
        (await q<SessionRow>(`SELECT ${SESSION_COLS} FROM sessions WHERE title = $1`, [exact]))[0] ?? null,
    );
  }

  /** Resolves a title to a session id, preferring the newest `<title> #n` continuation. */
  async resolveSessionByTitle(title: string): Promise<string | null> {
    const text = titleArgument("title", title);
    return this.#read(async (q) => {
      const variant = (
        await q<{ id: string }>(
          "SELECT id FROM sessions WHERE title ILIKE $1 ESCAPE '\\' ORDER BY started_at DESC LIMIT 1",
          [`${escapeLike(text)} #%`],
        )
      )[0];
      if (variant !== undefined) return variant.id;
      return (await q<{ id: string }>("SELECT id FROM sessions WHERE title = $1", [text]))[0]?.id ?? null;
    });
  }

  /** The next title of a lineage (`X` → `X #2`, `X #7` → `X #8`). */
  async getNextTitleInLineage(baseTitle: string): Promise<string> {
    const title = titleArgument("baseTitle", baseTitle);
    return this.#read((q) => nextTitleInLineage(q, title));
  }

  // Messages --------------------------------------------------------------------------------

  /** Appends a message and bumps the session's counters in one transaction; returns its id. */
  async appendMessage(m: AppendMessageInput): Promise<number> {
    const prepared = messageRowFor(m);
    return this.#write(async (q) => insertMessage(q, prepared, this.#now()));
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
    return this.#write(async (q) => {
      // Every session checked before any insert: a refused batch consumes no id.
      const wanted = [...new Set(prepared.map((p) => p.row.session_id))];
      const found = new Set(
        (
          await q<{ id: string }>("SELECT id FROM sessions WHERE id = ANY($1::text[]) FOR KEY SHARE", [
            wanted,
          ])
        ).map((r) => r.id),
      );
      const missing = wanted.find((id) => !found.has(id));
      if (missing !== undefined) {
        throw new SessionNotFoundError(missing, `appendMessage: session ${missing} does not exist`);
      }
      const ids: number[] = [];
      for (const p of prepared) ids.push(await insertMessage(q, p, this.#now()));
      return ids;
    });
  }

  /** Every message of a session, ordered by (timestamp, id), with `tool_calls` parsed. */
  async getMessages(sessionId: string): Promise<MessageRow[]> {
    const id = requireId("sessionId", sessionId);
    return this.#read(async (q) =>
      (
        await q<StoredMessageRow>(
          `SELECT ${MESSAGE_COLS} FROM messages WHERE session_id = $1 ORDER BY timestamp, id`,
          [id],
        )
      ).map(toMessageRow),
    );
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
    return this.#snapshot((q) => conversationOf(q, id, includeAncestors === true));
  }

  /** Deletes a session's messages and resets its message and tool-call counters. */
  async clearMessages(sessionId: string): Promise<void> {
    const id = requireId("sessionId", sessionId);
    await this.#write(async (q) => {
      await q("DELETE FROM messages WHERE session_id = $1", [id]);
      await q("UPDATE sessions SET message_count = 0, tool_call_count = 0 WHERE id = $1", [id]);
    });
  }

  // Search ----------------------------------------------------------------------------------

  /**
   * Full-text search with the SQLite store's syntax and rules: words through the `tsvector`
   * GIN index (ranked, `>>>`/`<<<` snippets), CJK through substring search on the pg_trgm
   * GIN index (newest first, 120-character excerpts).
   */
  async searchMessages(query: string, o?: SearchMessagesOptions): Promise<SearchHit[]> {
    if (typeof query !== "string") throw new InvalidArgumentError("query", "query must be a string");
    const opts = options("options", o);
    const sourceFilter = optionalStringArray("sourceFilter", opts.sourceFilter);
    const excludeSources = optionalStringArray("excludeSources", opts.excludeSources);
    const roleFilter = optionalStringArray("roleFilter", opts.roleFilter);
    const limit = nonNegativeInt("limit", opts.limit, 20, SEARCH_LIMITS.maxLimit);
    const offset = nonNegativeInt("offset", opts.offset, 0);
    const tooLong = searchLimitViolation(query, null);
    if (tooLong !== null) throw new InvalidArgumentError("query", tooLong);
    const plan = planSearch(query);
    const violation = searchLimitViolation(query, plan);
    if (violation !== null) throw new InvalidArgumentError("query", violation);
    if (plan.kind === "empty") return [];
    if (sourceFilter !== null && sourceFilter.length === 0) return [];
    this.#check();

    const params: unknown[] = [];
    const filters: string[] = [];
    const addFilter = (sql: (n: number) => string, value: unknown) => {
      params.push(value);
      filters.push(sql(params.length));
    };
    const built = await this.#read((q) => this.#searchQuery(q, query, plan, params));
    if (built === null) return [];
    if (sourceFilter !== null) addFilter((n) => `s.source = ANY($${n}::text[])`, sourceFilter);
    if (excludeSources !== null && excludeSources.length > 0)
      addFilter((n) => `NOT (s.source = ANY($${n}::text[]))`, excludeSources);
    if (roleFilter !== null && roleFilter.length > 0)
      addFilter((n) => `m.role = ANY($${n}::text[])`, roleFilter);
    params.push(limit, offset);
    const order =
      built.ranked !== null ? "ORDER BY score DESC, m.id" : "ORDER BY m.timestamp DESC, m.id DESC";
    const sql = `${built.sql}${filters.map((f) => ` AND ${f}`).join("")} ${order} LIMIT $${params.length - 1} OFFSET $${params.length}`;
    return this.#read(async (q) => {
      const rows = await q<{
        id: number;
        session_id: string;
        role: string;
        content: string | null;
        tool_calls: string | null;
        timestamp: number;
        tool_name: string | null;
        source: string;
        model: string | null;
        session_started: number;
      }>(sql, params);
      const contexts = await searchContexts(
        q,
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
  async #corpus(q: Query, kind: "words" | "trigrams"): Promise<{ rows: number; size: number }> {
    const cached = this.#corpusCache[kind];
    // Exact on small tables (where one message changes the ranking visibly); on large ones
    // the figures move slowly, and a minute-old value keeps each search from scanning them.
    if (cached !== undefined && cached.rows > 50_000 && performance.now() - cached.at < 60_000) return cached;
    const size = kind === "words" ? "COALESCE(SUM(search_tokens), 0)" : "COALESCE(SUM(search_trigrams), 0)";
    const row = (
      await q<{ rows: number; size: number }>(`SELECT COUNT(*) AS rows, ${size} AS size FROM messages`)
    )[0];
    const fresh = { rows: row?.rows ?? 0, size: row?.size ?? 0, at: performance.now() };
    this.#corpusCache[kind] = fresh;
    return fresh;
  }

  /**
   * The SELECT of a search (without filters, order and paging), its parameters pushed onto
   * `params`: ranked plans score rows with FTS5's bm25 (k1 1.2, b 0.75, whole-row sizes), CJK
   * substring plans select with ILIKE on the pg_trgm index.
   */
  async #searchQuery(
    q: Query,
    query: string,
    plan: Exclude<ReturnType<typeof planSearch>, { kind: "empty" }>,
    params: unknown[],
  ): Promise<{
    sql: string;
    ranked: { phrases: Phrase[]; tokenize: typeof wordTokensAt } | null;
    needles: readonly string[];
  } | null> {
    const select = `SELECT m.id, m.session_id, m.role, m.content, m.tool_calls, m.timestamp, m.tool_name,
        s.source, s.model, s.started_at AS session_started`;
    if (plan.kind === "ranked" && plan.index === "messages_fts") {
      const tree = parseFtsQuery(query);
      const tsq = tree === null ? null : tsqueryLiteral(tree);
      if (tree === null || tsq === null) return null;
      const phrases = queryPhrases(tree);
      const corpus = await this.#corpus(q, "words");
      const avgdl = corpus.rows > 0 ? corpus.size / corpus.rows || 1 : 1;
      const terms: string[] = [];
      const lateral: string[] = [];
      for (const p of phrases) {
        const literal = p.words
          .map((w, i) => `'${w}'${p.prefix && i === p.words.length - 1 ? ":*" : ""}`)
          .join(" <-> ");
        const hits =
          (
            await q<{ n: number }>("SELECT COUNT(*) AS n FROM messages WHERE search_vector @@ $1::tsquery", [
              literal,
            ])
          )[0]?.n ?? 0;
        let f: string;
        if (p.words.length === 1) {
          // One word: its positions counted in the row's single pass over its vector.
          params.push(p.words[0]);
          const test = p.prefix
            ? `starts_with(u.lexeme, $${params.length}::text)`
            : `u.lexeme = $${params.length}::text`;
          lateral.push(
            `COALESCE(SUM(cardinality(u.positions)) FILTER (WHERE ${test}), 0) AS f${lateral.length}`,
          );
          f = `fq.f${lateral.length - 1}`;
        } else {
          params.push(p.words, p.prefix);
          f = `hermes_phrase_freq(m.search_vector, $${params.length - 1}::text[], $${params.length}::boolean)`;
        }
        terms.push(
          `${bm25Idf(corpus.rows, hits)} * (${f} * ${BM25_K1 + 1}) / (${f} + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * COALESCE(m.search_tokens, 0) / ${avgdl}::double precision))`,
        );
      }
      params.push(tsq);
      return {
        ranked: { phrases, tokenize: wordTokensAt },
        needles: [],
        sql: `${select}, (${terms.length > 0 ? terms.join(" + ") : "0"}) AS score
          FROM messages m JOIN sessions s ON s.id = m.session_id
          ${lateral.length > 0 ? `CROSS JOIN LATERAL (SELECT ${lateral.join(", ")} FROM unnest(m.search_vector) u) fq` : ""}
          WHERE m.search_vector @@ $${params.length}::tsquery`,
      };
    }
    const sanitized = sanitizeFts5Query(query);
    const tree = parseQueryTokens(lexCjkQuery(sanitized));
    if (tree === null || pyStrip(sanitized).length === 0) return null;
    const condition = substringCondition(tree, params);
    if (plan.kind === "ranked") {
      // Three or more CJK characters, every term long enough for the trigram index: ranked.
      const texts = queryTerms(tree).map((t) => t.text);
      const phrases = trigramPhrases(texts);
      const corpus = await this.#corpus(q, "trigrams");
      const avgdl = corpus.rows > 0 ? corpus.size / corpus.rows || 1 : 1;
      const doc = `lower(${SEARCH_DOCUMENT_SQL})`;
      const size = "COALESCE(m.search_trigrams, 0)";
      const terms: string[] = [];
      for (const text of texts) {
        const probe: unknown[] = [];
        const cond = substringCondition({ kind: "term", text, prefix: false }, probe);
        const hits =
          (await q<{ n: number }>(`SELECT COUNT(*) AS n FROM messages m WHERE ${cond}`, probe))[0]?.n ?? 0;
        params.push(text.toLowerCase());
        const n = `$${params.length}::text`;
        const f = `((char_length(${doc}) - char_length(replace(${doc}, ${n}, ''))) / GREATEST(char_length(${n}), 1))`;
        terms.push(
          `${bm25Idf(corpus.rows, hits)} * (${f} * ${BM25_K1 + 1}) / (${f} + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * ${size} / ${avgdl}::double precision))`,
        );
      }
      return {
        ranked: { phrases, tokenize: trigramTokens },
        needles: [],
        sql: `${select}, (${terms.join(" + ")}) AS score FROM messages m JOIN sessions s ON s.id = m.session_id WHERE ${condition}`,
      };
    }
    return {
      ranked: null,
      needles: positiveTerms(tree).map((t) => t.text),
      sql: `${select} FROM messages m JOIN sessions s ON s.id = m.session_id WHERE ${condition}`,
    };
  }

  /** State of the search index: rows whose `search_vector` is missing count as damage. */
  async verifySearchIndex(): Promise<SearchIndexReport> {
    return this.#read(async (q) => {
      const missing =
        (await q<{ n: number }>("SELECT COUNT(*) AS n FROM messages WHERE search_vector IS NULL"))[0]?.n ?? 0;
      const indexes = (
        await q<{ indexname: string }>(
          "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname IN ('idx_messages_search_vector', 'idx_messages_search_trgm')",
        )
      ).map((r) => r.indexname);
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
      const n = await this.#write(async (q) => {
        const rows = await q<{
          id: number;
          content: string | null;
          tool_calls: string | null;
          tool_name: string | null;
        }>("SELECT id, content, tool_calls, tool_name FROM messages WHERE id > $1 ORDER BY id LIMIT 1000", [
          after,
        ]);
        for (const r of rows) {
          await q(
            "UPDATE messages SET search_vector = $2::tsvector, search_tokens = $3, search_trigrams = $4 WHERE id = $1",
            [
              r.id,
              searchVectorLiteral(r.content, r.tool_calls, r.tool_name),
              searchTokenCount(r.content, r.tool_calls, r.tool_name),
              searchTrigramCount(r.content, r.tool_calls, r.tool_name),
            ],
          );
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
    return this.#snapshot(async (q) => {
      const session = (await q<SessionRow>(`SELECT ${SESSION_COLS} FROM sessions WHERE id = $1`, [sid]))[0];
      if (session === undefined) return null;
      const messages = (
        await q<StoredMessageRow>(
          `SELECT ${MESSAGE_COLS} FROM messages WHERE session_id = $1 ORDER BY timestamp, id`,
          [sid],
        )
      ).map(toMessageRow);
      return { ...session, messages };
    });
  }

  /** Every session (or one source's) with its messages, most recently active first. */
  async exportAll(o?: {
    source?: string;
  }): Promise<Array<SessionWithLastActive & { messages: MessageRow[] }>> {
    const source = optionalString("source", options("options", o).source);
    return this.#snapshot(async (q) => {
      const rows = await q<SessionWithLastActive>(
        `SELECT ${sCols("s")}, COALESCE(m.last_active, s.started_at) AS last_active FROM sessions s
         LEFT JOIN (SELECT session_id, MAX(timestamp) AS last_active FROM messages GROUP BY session_id) m
           ON m.session_id = s.id
         WHERE ($1::text IS NULL OR $1::text = '' OR s.source = $1)
         ORDER BY last_active DESC, s.started_at DESC, s.id COLLATE "C" DESC LIMIT $2`,
        [source, EXPORT_ALL_LIMIT],
      );
      const out: Array<SessionWithLastActive & { messages: MessageRow[] }> = [];
      for (const row of rows) {
        const messages = (
          await q<StoredMessageRow>(
            `SELECT ${MESSAGE_COLS} FROM messages WHERE session_id = $1 ORDER BY timestamp, id`,
            [row.id],
          )
        ).map(toMessageRow);
        out.push({ ...row, messages });
      }
      return out;
    });
  }

  /** Deletes a session and its messages, orphaning its children; `false` when unknown. */
  async deleteSession(id: string, o?: { sessionsDir?: string }): Promise<boolean> {
    const sid = requireId("id", id);
    const dir = sessionsDirOf(options("options", o).sessionsDir);
    const deleted = await this.#write(async (q) => {
      if ((await q("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [sid])).length === 0) return false;
      await q("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = $1", [sid]);
      await q("DELETE FROM messages WHERE session_id = $1", [sid]);
      await q("DELETE FROM sessions WHERE id = $1", [sid]);
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
    const removed = await this.#write(async (q) => {
      const cutoff = this.#now() - days * 86_400;
      const ids = (
        await q<{ id: string }>(
          `SELECT id FROM sessions WHERE started_at < $1 AND ended_at IS NOT NULL
             AND ($2::text IS NULL OR source = $2) FOR UPDATE`,
          [cutoff, source],
        )
      ).map((r) => r.id);
      if (ids.length === 0) return [];
      await q("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ANY($1::text[])", [
        ids,
      ]);
      await q("DELETE FROM messages WHERE session_id = ANY($1::text[])", [ids]);
      await q("DELETE FROM sessions WHERE id = ANY($1::text[])", [ids]);
      return ids;
    });
    if (dir !== null) await removeSessionFiles(dir, removed);
    return removed.length;
  }

  /** The value stored under `key` in `state_meta`, or `null`. */
  async getMeta(key: string): Promise<string | null> {
    const k = requireId("key", key);
    return this.#read(
      async (q) =>
        (await q<{ value: string | null }>("SELECT value FROM state_meta WHERE key = $1", [k]))[0]?.value ??
        null,
    );
  }

  /** Stores `value` under `key` in `state_meta`. */
  async setMeta(key: string, value: string): Promise<void> {
    const k = requireId("key", key);
    if (typeof value !== "string") throw new InvalidArgumentError("value", "value must be a string");
    await this.#write(async (q) => {
      await q(
        "INSERT INTO state_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [k, value],
      );
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
      async (q) => {
        await q("VACUUM (ANALYZE) sessions, messages, state_meta");
      },
      { transaction: false },
    );
  }

  /** Startup housekeeping: prune (and vacuum) at most once per `minIntervalHours`. Never throws. */
  async maybeAutoPruneAndVacuum(o?: AutoPruneOptions): Promise<AutoPruneResult> {
    const result: AutoPruneResult = { skipped: false, pruned: 0, vacuumed: false };
    try {
      const opts = options("options", o);
      const retentionDays = duration("retentionDays", opts.retentionDays, 90);
      const minIntervalHours = duration("minIntervalHours", opts.minIntervalHours, 24);
      if (opts.vacuum !== undefined && typeof opts.vacuum !== "boolean") {
        throw new InvalidArgumentError("vacuum", "vacuum must be a boolean");
      }
      const sessionsDir = sessionsDirOf(opts.sessionsDir);
      const lastRaw = await this.getMeta(LAST_AUTO_PRUNE_KEY);
      const now = this.#now();
      if (lastRaw) {
        const last = parsePythonFloat(lastRaw);
        if (last !== null && now - last < minIntervalHours * 3600) {
          result.skipped = true;
          return result;
        }
      }
      result.pruned = await this.pruneSessions({
        olderThanDays: retentionDays,
        ...(sessionsDir === null ? {} : { sessionsDir }),
      });
      if (opts.vacuum !== false && result.pruned > 0) {
        try {
          await this.vacuum();
          result.vacuumed = true;
        } catch {
          // As on SQLite: the prune stands.
        }
      }
      await this.setMeta(LAST_AUTO_PRUNE_KEY, pythonFloatText(now));
    } catch (error) {
      result.error = error instanceof Error ? error.message : String(error);
    }
    return result;
  }

  // Portability ---------------------------------------------------------------------------

  /** Every matching session with its messages, one at a time, from one snapshot. */
  exportStream(o?: ExportStreamOptions): AsyncIterable<PortableSession> {
    this.#check();
    const filter = exportFilter(o);
    return this.#guard(this.#exportSessions(filter));
  }

  async *#exportSessions(filter: ReturnType<typeof exportFilter>): AsyncGenerator<PortableSession> {
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      const q = queryOn(client);
      const ids = filter.ids === null ? null : (JSON.parse(filter.ids) as string[]);
      let afterT = Number.NEGATIVE_INFINITY;
      let afterId = "";
      for (;;) {
        const sessions = await q<Record<string, unknown>>(
          `SELECT ${SESSION_COLS} FROM sessions
           WHERE (started_at, id COLLATE "C") > ($1::double precision, $2::text COLLATE "C")
             AND ($3::text IS NULL OR source = $3) AND ($4::double precision IS NULL OR started_at >= $4)
             AND ($5::text[] IS NULL OR id = ANY($5::text[]))
           ORDER BY started_at, id COLLATE "C" LIMIT 200`,
          [afterT, afterId, filter.source, filter.since, ids],
        );
        for (const raw of sessions) {
          const session = canonicalSession(raw);
          const messages: StoredMessageRow[] = [];
          let mT = Number.NEGATIVE_INFINITY;
          let mId = 0;
          for (;;) {
            const page = await q<Record<string, unknown>>(
              `SELECT ${MESSAGE_COLS} FROM messages WHERE session_id = $1 AND (timestamp, id) > ($2, $3)
               ORDER BY timestamp, id LIMIT 1000`,
              [session.id, mT, mId],
            );
            for (const m of page) messages.push(canonicalMessage(m));
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
      await client.query("COMMIT");
    } catch (error) {
      throw mapPgError(error);
    } finally {
      await client.query("ROLLBACK").catch(() => {});
      client.release();
    }
  }

  /** Writes the JSONL interchange format (header, then one session per line). */
  async exportJsonl(destination: JsonlDestination, o?: ExportStreamOptions): Promise<ExportReport> {
    this.#check();
    const filter = exportFilter(o);
    const sink = await sinkFor(destination);
    const report: ExportReport = { sessions: 0, messages: 0, bytes: 0 };
    try {
      const opts = o ?? {};
      const headerFilter: Record<string, unknown> = {};
      if (opts.source !== undefined) headerFilter.source = opts.source;
      if (opts.sessionIds !== undefined) headerFilter.session_ids = opts.sessionIds;
      if (opts.since !== undefined) headerFilter.since = opts.since;
      await sink.write(`${JSON.stringify(jsonlHeader(this.#now(), headerFilter))}\n`);
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
        exists: async (id) => (await this.#q("SELECT 1 FROM sessions WHERE id = $1", [id])).length > 0,
        write: (fn) => this.#write((q) => fn(q)),
      },
      source,
      o,
    );
  }

  /** A session's messages page by page (cursor `afterId`), in conversation order. */
  iterMessages(sessionId: string, o?: IterMessagesOptions): AsyncIterable<MessageRow> {
    const id = requireId("sessionId", sessionId);
    const opts = options("options", o);
    const limit = nonNegativeInt("limit", opts.limit, Number.MAX_SAFE_INTEGER);
    const pageSize = nonNegativeInt("pageSize", opts.pageSize, 500, 100_000);
    if (pageSize === 0) throw new InvalidArgumentError("pageSize", "pageSize must be at least 1");
    const afterId = opts.afterId;
    if (afterId !== undefined && (typeof afterId !== "number" || !Number.isSafeInteger(afterId))) {
      throw new InvalidArgumentError("afterId", "afterId must be an integer message id");
    }
    this.#check();
    const read = <T>(fn: (q: Query) => Promise<T>) => this.#read(fn);
    return this.#guard(
      (async function* () {
        let afterT = Number.NEGATIVE_INFINITY;
        let cursorId = 0;
        if (afterId !== undefined) {
          const row = (
            await read((q) =>
              q<{ timestamp: number }>("SELECT timestamp FROM messages WHERE id = $1 AND session_id = $2", [
                afterId,
                id,
              ]),
            )
          )[0];
          if (row === undefined) {
            throw new InvalidArgumentError("afterId", `message ${afterId} is not a message of session ${id}`);
          }
          afterT = row.timestamp;
          cursorId = afterId;
        }
        let left = limit;
        while (left > 0) {
          const n = Math.min(pageSize, left);
          const page = await read((q) =>
            q<StoredMessageRow>(
              `SELECT ${MESSAGE_COLS} FROM messages WHERE session_id = $1 AND (timestamp, id) > ($2, $3)
               ORDER BY timestamp, id LIMIT $4`,
              [id, afterT, cursorId, n],
            ),
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
    return this.#snapshot(async (q) => {
      const total =
        (await q<{ n: number }>("SELECT COUNT(*) AS n FROM messages WHERE session_id = $1", [id]))[0]?.n ?? 0;
      const picked: WindowRow[] = [];
      let tokens = 0;
      let beforeT = Number.POSITIVE_INFINITY;
      let beforeId = Number.MAX_SAFE_INTEGER;
      scan: while (picked.length < lastMessages) {
        const wanted = Math.min(200, lastMessages - picked.length);
        const page = await q<WindowRow>(
          `SELECT id, timestamp, role, content, tool_call_id, tool_calls, tool_name, token_count, reasoning,
              reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items
           FROM messages WHERE session_id = $1 AND (timestamp, id) < ($2, $3)
           ORDER BY timestamp DESC, id DESC LIMIT $4`,
          [id, beforeT, beforeId, wanted],
        );
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
      while (picked.length > 1 && picked[0]!.role === "tool") tokens -= estimateTokens(picked.shift()!);
      return {
        messages: picked.map((row) => toConversationMessage(row)),
        omittedMessages: total - picked.length,
        estimatedTokens: tokens,
      };
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
    return this.#snapshot(async (q) => {
      const row = (
        await q<{ system_prompt: string | null }>("SELECT system_prompt FROM sessions WHERE id = $1", [id])
      )[0];
      return toAnthropicMessages(
        await conversationOf(q, id, includeAncestors === true),
        row?.system_prompt ?? null,
      );
    });
  }

  /** Forks a session (messages up to `atMessageId`); returns the new row. */
  async forkSession(id: string, o?: ForkSessionOptions): Promise<SessionRow> {
    const parentId = requireId("id", id);
    const opts = options("options", o);
    const at = opts.atMessageId;
    if (at !== undefined && (typeof at !== "number" || !Number.isSafeInteger(at) || at <= 0)) {
      throw new InvalidArgumentError("atMessageId", "atMessageId must be a positive integer");
    }
    const requestedId = opts.newId === undefined ? null : requireId("newId", opts.newId);
    const explicitTitle =
      opts.title === undefined ? undefined : sanitizeTitle(optionalString("title", opts.title));
    return this.#write(async (q) => {
      const parent = (
        await q<SessionRow>(`SELECT ${SESSION_COLS} FROM sessions WHERE id = $1`, [parentId])
      )[0];
      if (parent === undefined)
        throw new SessionNotFoundError(parentId, `forkSession: session ${parentId} does not exist`);
      let atT = Number.POSITIVE_INFINITY;
      let atId = Number.MAX_SAFE_INTEGER;
      if (at !== undefined) {
        const row = (
          await q<{ timestamp: number }>("SELECT timestamp FROM messages WHERE id = $1 AND session_id = $2", [
            at,
            parentId,
          ])
        )[0];
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
      if ((await q("SELECT 1 FROM sessions WHERE id = $1", [newId])).length > 0) {
        throw new InvalidArgumentError("newId", `a session with id ${newId} already exists`);
      }
      let title: string | null;
      if (explicitTitle !== undefined) {
        title = explicitTitle;
        const holder =
          title === null
            ? undefined
            : (await q<{ id: string }>("SELECT id FROM sessions WHERE title = $1 LIMIT 1", [title]))[0];
        if (holder !== undefined && title !== null) throw new TitleConflictError(title, holder.id);
      } else {
        title = parent.title === null ? null : await nextTitleInLineage(q, parent.title);
      }
      await q(
        `INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at,
           title, billing_provider, billing_base_url, billing_mode)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [
          newId,
          parent.source,
          parent.user_id,
          parent.model,
          branchedConfig(parent.model_config, parentId),
          parent.system_prompt,
          parentId,
          now,
          title,
          parent.billing_provider,
          parent.billing_base_url,
          parent.billing_mode,
        ],
      );
      await q(
        `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count,
           finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, search_vector, search_tokens, search_trigrams)
         SELECT $1, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning,
           reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, search_vector, search_tokens, search_trigrams
         FROM messages WHERE session_id = $2 AND (timestamp, id) <= ($3, $4) ORDER BY timestamp, id`,
        [newId, parentId, atT, atId],
      );
      const copied = await q<{ tool_calls: string | null }>(
        "SELECT tool_calls FROM messages WHERE session_id = $1",
        [newId],
      );
      let toolCalls = 0;
      for (const m of copied) toolCalls += toolCallWeight(m.tool_calls);
      await q("UPDATE sessions SET message_count = $2, tool_call_count = $3 WHERE id = $1", [
        newId,
        copied.length,
        toolCalls,
      ]);
      return (
        await q<SessionRow>(`SELECT ${SESSION_COLS} FROM sessions WHERE id = $1`, [newId])
      )[0] as SessionRow;
    });
  }

  /** Ancestors and descendants of a session with the kind of each link, or `null`. */
  async getLineage(id: string, o?: { maxDescendants?: number }): Promise<Lineage | null> {
    const sessionId = requireId("id", id);
    const limit = nonNegativeInt("maxDescendants", options("options", o).maxDescendants, 10_000, 1_000_000);
    return this.#snapshot(async (q) => {
      const node = async (nid: string) => (await q<NodeRow>(`${NODE_SQL} WHERE c.id = $1`, [nid]))[0];
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
      const rows = await q<NodeRow & { depth: number }>(
        `WITH RECURSIVE tree(id, depth) AS (
           SELECT id, 1 FROM sessions WHERE parent_session_id = $1
           UNION
           SELECT s.id, t.depth + 1 FROM sessions s JOIN tree t ON s.parent_session_id = t.id WHERE t.depth < $2
         )
         SELECT ${NODE_FIELDS}, t.depth AS depth FROM tree t
           JOIN sessions c ON c.id = t.id LEFT JOIN sessions p ON p.id = c.parent_session_id
         ORDER BY t.depth, c.started_at, c.id COLLATE "C" LIMIT $3`,
        [sessionId, MAX_LINEAGE_HOPS, limit + seen.size],
      );
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
      groupBy === "day" ? "to_char(to_timestamp(started_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD')" : groupBy;
    const args = [
      optionalNumber("since", opts.since),
      optionalNumber("until", opts.until),
      optionalString("source", opts.source),
    ];
    return this.#read((q) =>
      q<UsageStatsRow>(
        `SELECT ${group} AS "group", COUNT(*) AS sessions,
           COALESCE(SUM(message_count), 0) AS messages, COALESCE(SUM(tool_call_count), 0) AS tool_calls,
           COALESCE(SUM(api_call_count), 0) AS api_calls, COALESCE(SUM(input_tokens), 0) AS input_tokens,
           COALESCE(SUM(output_tokens), 0) AS output_tokens, COALESCE(SUM(cache_read_tokens), 0) AS cache_read_tokens,
           COALESCE(SUM(cache_write_tokens), 0) AS cache_write_tokens, COALESCE(SUM(reasoning_tokens), 0) AS reasoning_tokens,
           SUM(estimated_cost_usd) AS estimated_cost_usd, SUM(actual_cost_usd) AS actual_cost_usd
         FROM sessions
         WHERE ($1::double precision IS NULL OR started_at >= $1) AND ($2::double precision IS NULL OR started_at < $2)
           AND ($3::text IS NULL OR source = $3)
         GROUP BY 1 ORDER BY ${group} COLLATE "C" NULLS FIRST`,
        args,
      ),
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
   * file, so the checkpoint and WAL fields stay 0.
   */
  stats(): StoreStats {
    const w = this.#writer.stats;
    return {
      ...w,
      groupsCommitted: w.writes,
      writesPerGroupMean: w.writes > 0 ? 1 : 0,
      writesPerGroupMax: w.writes > 0 ? 1 : 0,
      checkpoints: 0,
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

async function compressionTip(q: Query, id: string): Promise<string> {
  let current = id;
  for (let hop = 0; hop < 100; hop++) {
    const next = (
      await q<{ id: string }>(
        `SELECT id FROM sessions WHERE parent_session_id = $1
           AND started_at >= (SELECT ended_at FROM sessions WHERE id = $1 AND end_reason = 'compression')
         ORDER BY started_at DESC LIMIT 1`,
        [current],
      )
    )[0];
    if (next === undefined) return current;
    current = next.id;
  }
  return current;
}

async function nextTitleInLineage(q: Query, title: string): Promise<string> {
  const base = NUMBERED_SUFFIX.exec(title)?.[1] ?? title;
  const existing = await q<{ title: string | null }>(
    "SELECT title FROM sessions WHERE title = $1 OR title ILIKE $2 ESCAPE '\\'",
    [base, `${escapeLike(base)} #%`],
  );
  if (existing.length === 0) return base;
  let max = 1n;
  for (const row of existing) {
    const digits = typeof row.title === "string" ? LAST_NUMBER.exec(row.title)?.[1] : undefined;
    if (digits === undefined) continue;
    const n = decimalValue(digits);
    if (n > max) max = n;
  }
  return `${base} #${max + 1n}`;
}

async function insertMessage(
  q: Query,
  { row, toolCallDelta }: ReturnType<typeof messageRowFor>,
  now: number,
): Promise<number> {
  // Checked first (and the row share-locked against a concurrent delete) so that a refused
  // append consumes no id: ids then follow the SQLite store's, which reuses rolled-back ids.
  if ((await q("SELECT 1 FROM sessions WHERE id = $1 FOR KEY SHARE", [row.session_id])).length === 0) {
    throw new SessionNotFoundError(row.session_id, `appendMessage: session ${row.session_id} does not exist`);
  }
  let id: number;
  try {
    const inserted = await q<{ id: number }>(INSERT_MESSAGE_SQL, [
      row.session_id,
      row.role,
      row.content,
      row.tool_call_id,
      row.tool_calls,
      row.tool_name,
      now,
      row.token_count,
      row.finish_reason,
      row.reasoning,
      row.reasoning_content,
      row.reasoning_details,
      row.codex_reasoning_items,
      row.codex_message_items,
      searchVectorLiteral(row.content, row.tool_calls, row.tool_name),
      searchTokenCount(row.content, row.tool_calls, row.tool_name),
      searchTrigramCount(row.content, row.tool_calls, row.tool_name),
    ]);
    id = inserted[0]!.id;
  } catch (error) {
    throw foreignKeyToNotFound(error, row.session_id, "appendMessage");
  }
  await q(
    "UPDATE sessions SET message_count = message_count + 1, tool_call_count = tool_call_count + $2 WHERE id = $1",
    [row.session_id, toolCallDelta],
  );
  return id;
}

const REPLAY_COLS =
  "role, content, tool_call_id, tool_calls, tool_name, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items";

async function conversationOf(
  q: Query,
  id: string,
  includeAncestors: boolean,
): Promise<ConversationMessage[]> {
  let rows: Parameters<typeof toConversationMessage>[0][];
  if (includeAncestors) {
    const chain: string[] = [];
    const seen = new Set<string>();
    let current: string | null = id;
    for (let hop = 0; hop < MAX_LINEAGE_HOPS; hop++) {
      if (current === null || current === "" || seen.has(current)) break;
      seen.add(current);
      chain.push(current);
      const row: { parent_session_id: string | null } | undefined = (
        await q<{ parent_session_id: string | null }>(
          "SELECT parent_session_id FROM sessions WHERE id = $1",
          [current],
        )
      )[0];
      if (row === undefined) break;
      current = row.parent_session_id;
    }
    rows = await q(
      `SELECT ${REPLAY_COLS} FROM messages WHERE session_id = ANY($1::text[]) ORDER BY timestamp, id`,
      [chain],
    );
  } else {
    rows = await q(`SELECT ${REPLAY_COLS} FROM messages WHERE session_id = $1 ORDER BY timestamp, id`, [id]);
  }
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
  q: Query,
  ids: readonly number[],
): Promise<Array<Array<{ role: string; content: string }>>> {
  if (ids.length === 0) return [];
  try {
    const rows = await q<{
      ord: number;
      prole: string | null;
      pcontent: string | null;
      role: string;
      content: string | null;
      nrole: string | null;
      ncontent: string | null;
    }>(
      `SELECT h.ord, p.role AS prole, left(p.content, 200) AS pcontent, t.role, left(t.content, 200) AS content,
          n.role AS nrole, left(n.content, 200) AS ncontent
       FROM unnest($1::bigint[]) WITH ORDINALITY AS h(id, ord)
       JOIN messages t ON t.id = h.id
       LEFT JOIN LATERAL (SELECT m.role, m.content FROM messages m WHERE m.session_id = t.session_id
           AND (m.timestamp, m.id) < (t.timestamp, t.id) ORDER BY m.timestamp DESC, m.id DESC LIMIT 1) p ON true
       LEFT JOIN LATERAL (SELECT m.role, m.content FROM messages m WHERE m.session_id = t.session_id
           AND (m.timestamp, m.id) > (t.timestamp, t.id) ORDER BY m.timestamp, m.id LIMIT 1) n ON true`,
      [ids],
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
const NODE_SQL = `SELECT ${NODE_FIELDS} FROM sessions c LEFT JOIN sessions p ON p.id = c.parent_session_id`;

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
      // The schema must exist before connections point their search_path at it.
      const setup = new pg.Client({ connectionString });
      await setup.connect();
      try {
        await setup.query(`SELECT pg_advisory_lock(hashtext('hermes-sessions-schema'))`);
        await setup.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      } catch (error) {
        throw mapPgError(error);
      } finally {
        await setup.end().catch(() => {});
      }
    }
    pool = new pg.Pool({
      connectionString,
      max: nonNegativeInt("maxConnections", opts.maxConnections, 10, 1000) || 10,
      ...(schema === null ? {} : { options: `-c search_path="${schema}",public` }),
    });
    owns = true;
  }
  try {
    const client = await pool.connect();
    let migration: PgMigrationReport;
    try {
      migration = await migratePg(client);
    } finally {
      client.release();
    }
    return new PostgresSessionStore(
      pool,
      owns,
      deadlineMs,
      migration,
      opts.clock ?? (() => Date.now() / 1000),
    );
  } catch (error) {
    if (owns) await pool.end().catch(() => {});
    throw mapPgError(error);
  }
}
