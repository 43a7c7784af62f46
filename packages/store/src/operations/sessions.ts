import {
  type CreateSessionInput,
  type EnsureSessionInput,
  escapeLike,
  InvalidArgumentError,
  integerDelta,
  type NewSessionRow,
  newSessionRow,
  optionalNumber,
  optionalString,
  optionsObject,
  requireId,
  SessionNotFoundError,
  type SessionRow,
  toSessionViewFields,
  type UpdateTokenCountsInput,
} from "@hermes/core";
import { sql } from "kysely";
import { compileQuery, param } from "../prepared-query.js";
import { sqliteCode } from "../sqlite-errors.js";
import type { StoreContext } from "../store-context.js";

const insertSession = compileQuery<NewSessionRow & { started_at: number }>((db) =>
  db
    .insertInto("sessions")
    .orIgnore()
    .values({
      id: param("id"),
      source: param("source"),
      user_id: param("user_id"),
      model: param("model"),
      model_config: param("model_config"),
      system_prompt: param("system_prompt"),
      parent_session_id: param("parent_session_id"),
      started_at: param("started_at"),
    }),
);

/**
 * Maps a foreign-key failure to the session the caller named (`SESSION_NOT_FOUND`); FKs are
 * enforced (`foreign_keys=ON`, as the reference), so the statement fails and nothing is written.
 */
export function foreignKeyToNotFound(error: unknown, sessionId: string, what: string): unknown {
  if (sqliteCode(error) === "SQLITE_CONSTRAINT_FOREIGNKEY") {
    return new SessionNotFoundError(sessionId, `${what}: session ${sessionId} does not exist`, {
      cause: error,
    });
  }
  return error;
}

/**
 * `INSERT OR IGNORE` of a new session (`started_at` = now): an existing id is left untouched
 * (first write wins, even when the second call names an unknown parent). A new row naming an
 * unknown parent fails the foreign key → `SESSION_NOT_FOUND`.
 */
export async function createSession(ctx: StoreContext, input: CreateSessionInput): Promise<string> {
  const row = newSessionRow(input);
  const { id, parent_session_id: parent } = row;
  await ctx.writes.run("createSession", () => {
    try {
      ctx.conn.runOf(insertSession, { ...row, started_at: ctx.now() });
    } catch (error) {
      throw foreignKeyToNotFound(error, parent ?? id, "createSession: unknown parent");
    }
  });
  return id;
}

/** Creates a minimal session row (`source` default `unknown`) when the id is missing; never overwrites. */
export async function ensureSession(ctx: StoreContext, input: EnsureSessionInput): Promise<void> {
  const s = optionsObject("session", input);
  const args = {
    id: requireId("id", s.id),
    source: s.source === undefined ? "unknown" : requireId("source", s.source),
    user_id: null,
    model: optionalString("model", s.model),
    model_config: null,
    system_prompt: null,
    parent_session_id: null,
  };
  await ctx.writes.run("ensureSession", () => {
    ctx.conn.runOf(insertSession, { ...args, started_at: ctx.now() });
  });
}

// `ended_at IS NULL`: the first end wins, so a stale end never overwrites 'compression' or
// 'branched', which lineage and listing depend on (the reference's rule).
const endSessionQ = compileQuery<{ id: string; ended_at: number; end_reason: string }>((db) =>
  db
    .updateTable("sessions")
    .set({ ended_at: param("ended_at"), end_reason: param("end_reason") })
    .where("id", "=", param("id"))
    .where("ended_at", "is", null),
);

/** Marks a session ended with `endReason` unless it already ended; unknown ids are a no-op. */
export async function endSession(ctx: StoreContext, id: string, endReason: string): Promise<void> {
  const args = { id: requireId("id", id), end_reason: requireId("endReason", endReason) };
  await ctx.writes.run("endSession", () => {
    ctx.conn.runOf(endSessionQ, { ...args, ended_at: ctx.now() });
  });
}

const reopenQ = compileQuery<{ id: string }>((db) =>
  db.updateTable("sessions").set({ ended_at: null, end_reason: null }).where("id", "=", param("id")),
);

/** Clears `ended_at` and `end_reason` so the next end is recorded again. */
export async function reopenSession(ctx: StoreContext, id: string): Promise<void> {
  const args = { id: requireId("id", id) };
  await ctx.writes.run("reopenSession", () => {
    ctx.conn.runOf(reopenQ, args);
  });
}

const systemPromptQ = compileQuery<{ id: string; system_prompt: string | null }>((db) =>
  db
    .updateTable("sessions")
    .set({ system_prompt: param("system_prompt") })
    .where("id", "=", param("id")),
);

/** Replaces the stored system prompt snapshot (`null` clears it); unknown ids are a no-op. */
export async function updateSystemPrompt(ctx: StoreContext, id: string, systemPrompt: string): Promise<void> {
  const args = { id: requireId("id", id), system_prompt: optionalString("systemPrompt", systemPrompt) };
  await ctx.writes.run("updateSystemPrompt", () => {
    ctx.conn.runOf(systemPromptQ, args);
  });
}

type TokenArgs = {
  id: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  estimated_cost_usd: number | null;
  actual_cost_usd: number | null;
  cost_status: string | null;
  cost_source: string | null;
  pricing_version: string | null;
  billing_provider: string | null;
  billing_base_url: string | null;
  billing_mode: string | null;
  model: string | null;
  api_call_count: number;
};

// Status columns: the new value wins when given. Billing columns and model: backfill only
// (an existing value is kept). Both as in the reference.
const keepOrNew = (col: string, p: string) => sql<string | null>`COALESCE(${param(p)}, ${sql.ref(col)})`;
const backfill = (col: string, p: string) => sql<string | null>`COALESCE(${sql.ref(col)}, ${param(p)})`;

const incrementalTokensQ = compileQuery<TokenArgs>((db) =>
  db
    .updateTable("sessions")
    .set({
      input_tokens: sql`input_tokens + ${param("input_tokens")}`,
      output_tokens: sql`output_tokens + ${param("output_tokens")}`,
      cache_read_tokens: sql`cache_read_tokens + ${param("cache_read_tokens")}`,
      cache_write_tokens: sql`cache_write_tokens + ${param("cache_write_tokens")}`,
      reasoning_tokens: sql`reasoning_tokens + ${param("reasoning_tokens")}`,
      estimated_cost_usd: sql`COALESCE(estimated_cost_usd, 0) + COALESCE(${param("estimated_cost_usd")}, 0)`,
      actual_cost_usd: sql`CASE WHEN ${param("actual_cost_usd")} IS NULL THEN actual_cost_usd ELSE COALESCE(actual_cost_usd, 0) + ${param("actual_cost_usd")} END`,
      cost_status: keepOrNew("cost_status", "cost_status"),
      cost_source: keepOrNew("cost_source", "cost_source"),
      pricing_version: keepOrNew("pricing_version", "pricing_version"),
      billing_provider: backfill("billing_provider", "billing_provider"),
      billing_base_url: backfill("billing_base_url", "billing_base_url"),
      billing_mode: backfill("billing_mode", "billing_mode"),
      model: backfill("model", "model"),
      api_call_count: sql`COALESCE(api_call_count, 0) + ${param("api_call_count")}`,
    })
    .where("id", "=", param("id")),
);

const absoluteTokensQ = compileQuery<TokenArgs>((db) =>
  db
    .updateTable("sessions")
    .set({
      input_tokens: param("input_tokens"),
      output_tokens: param("output_tokens"),
      cache_read_tokens: param("cache_read_tokens"),
      cache_write_tokens: param("cache_write_tokens"),
      reasoning_tokens: param("reasoning_tokens"),
      estimated_cost_usd: sql`COALESCE(${param("estimated_cost_usd")}, 0)`,
      actual_cost_usd: sql`COALESCE(${param("actual_cost_usd")}, actual_cost_usd)`,
      cost_status: keepOrNew("cost_status", "cost_status"),
      cost_source: keepOrNew("cost_source", "cost_source"),
      pricing_version: keepOrNew("pricing_version", "pricing_version"),
      billing_provider: backfill("billing_provider", "billing_provider"),
      billing_base_url: backfill("billing_base_url", "billing_base_url"),
      billing_mode: backfill("billing_mode", "billing_mode"),
      model: backfill("model", "model"),
      api_call_count: param("api_call_count"),
    })
    .where("id", "=", param("id")),
);

/**
 * Adds the token, cost and API-call deltas to a session (or, with `absolute`, sets the totals).
 * Never creates a missing session: the UPDATE simply matches no row, as in the reference.
 */
export async function updateTokenCounts(
  ctx: StoreContext,
  id: string,
  input: UpdateTokenCountsInput,
): Promise<void> {
  const u = optionsObject("usage", input);
  if (u.absolute !== undefined && typeof u.absolute !== "boolean") {
    throw new InvalidArgumentError("absolute", "absolute must be a boolean");
  }
  const args: TokenArgs = {
    id: requireId("id", id),
    input_tokens: integerDelta("inputTokens", u.inputTokens),
    output_tokens: integerDelta("outputTokens", u.outputTokens),
    cache_read_tokens: integerDelta("cacheReadTokens", u.cacheReadTokens),
    cache_write_tokens: integerDelta("cacheWriteTokens", u.cacheWriteTokens),
    reasoning_tokens: integerDelta("reasoningTokens", u.reasoningTokens),
    api_call_count: integerDelta("apiCallCount", u.apiCallCount),
    estimated_cost_usd: optionalNumber("estimatedCostUsd", u.estimatedCostUsd),
    actual_cost_usd: optionalNumber("actualCostUsd", u.actualCostUsd),
    cost_status: optionalString("costStatus", u.costStatus),
    cost_source: optionalString("costSource", u.costSource),
    pricing_version: optionalString("pricingVersion", u.pricingVersion),
    billing_provider: optionalString("billingProvider", u.billingProvider),
    billing_base_url: optionalString("billingBaseUrl", u.billingBaseUrl),
    billing_mode: optionalString("billingMode", u.billingMode),
    model: optionalString("model", u.model),
  };
  const q = u.absolute === true ? absoluteTokensQ : incrementalTokensQ;
  await ctx.writes.run("updateTokenCounts", () => {
    ctx.conn.runOf(q, args);
  });
}

const getSessionQ = compileQuery<{ id: string }>((db) =>
  db.selectFrom("sessions").selectAll().where("id", "=", param("id")),
);

/** Every column of one session (with the read model's fields on a newer agent's file), or `null`. */
export function getSession(ctx: StoreContext, id: string): SessionRow | null {
  const row = ctx.conn.getOf<SessionRow, { id: string }>(getSessionQ, { id: requireId("id", id) });
  return row === undefined ? null : toSessionViewFields(row);
}

const prefixQ = compileQuery<{ pattern: string }>((db) =>
  db
    .selectFrom("sessions")
    .select("id")
    .where(sql<boolean>`id LIKE ${param("pattern")} ESCAPE '\\'`)
    .orderBy("started_at", "desc")
    .limit(2),
);

/**
 * The exact id when it exists; else the one id starting with `idOrPrefix` (LIKE, with `\ % _`
 * escaped, so ASCII letters match case-insensitively as in the reference); `null` when none or
 * several match.
 */
export function resolveSessionId(ctx: StoreContext, idOrPrefix: string): string | null {
  const key = requireId("idOrPrefix", idOrPrefix);
  if (ctx.conn.getOf(getSessionQ, { id: key }) !== undefined) return key;
  const rows = ctx.conn.allOf<{ id: string }, { pattern: string }>(prefixQ, {
    pattern: `${escapeLike(key)}%`,
  });
  return rows.length === 1 ? (rows[0]?.id ?? null) : null;
}

const countAllSessionsQ = compileQuery((db) =>
  db.selectFrom("sessions").select((eb) => eb.fn.countAll<number>().as("n")),
);
const countSourceSessionsQ = compileQuery<{ source: string }>((db) =>
  db
    .selectFrom("sessions")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("source", "=", param("source")),
);

/** Number of sessions, of one source when `source` is a non-empty string. */
export function sessionCount(ctx: StoreContext, o?: { source?: string }): number {
  const source = optionalString("source", optionsObject("options", o).source);
  const row = source
    ? ctx.conn.getOf<{ n: number }, { source: string }>(countSourceSessionsQ, { source })
    : ctx.conn.getOf<{ n: number }, Record<string, never>>(countAllSessionsQ, {});
  return row?.n ?? 0;
}

const countAllMessagesQ = compileQuery((db) =>
  db.selectFrom("messages").select((eb) => eb.fn.countAll<number>().as("n")),
);
const countSessionMessagesQ = compileQuery<{ session_id: string }>((db) =>
  db
    .selectFrom("messages")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("session_id", "=", param("session_id")),
);

/**
 * Number of message rows (not the counter column), of one session when `sessionId` is non-empty.
 * On a newer agent's file: its active rows, the ones its counters count.
 */
export function messageCount(ctx: StoreContext, o?: { sessionId?: string }): number {
  const sessionId = optionalString("sessionId", optionsObject("options", o).sessionId);
  if (ctx.reads) {
    const counted = sessionId
      ? ctx.conn.get<{ n: number }>(ctx.reads.countSessionSql, [sessionId])
      : ctx.conn.get<{ n: number }>(ctx.reads.countAllSql);
    return counted?.n ?? 0;
  }
  const row = sessionId
    ? ctx.conn.getOf<{ n: number }, { session_id: string }>(countSessionMessagesQ, { session_id: sessionId })
    : ctx.conn.getOf<{ n: number }, Record<string, never>>(countAllMessagesQ, {});
  return row?.n ?? 0;
}
