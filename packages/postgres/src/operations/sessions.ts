import {
  type CreateSessionInput,
  type EnsureSessionInput,
  escapeLike,
  InvalidArgumentError,
  integerDelta,
  newSessionRow,
  optionalNumber,
  optionalString,
  optionsObject,
  requireId,
  type UpdateTokenCountsInput,
} from "@hermes/core";
import type { SessionRow } from "@hermes/schema";
import { sql } from "kysely";
import type { PgDb } from "../pg-database.js";
import { foreignKeyToNotFound } from "../pg-errors.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { SESSION_COLUMNS, sessionReadRow } from "../table-columns.js";

/** Creates a session; an existing id is left as it is (first write wins). Returns the id. */
export async function createSession(ctx: PgStoreContext, input: CreateSessionInput): Promise<string> {
  const row = newSessionRow(input);
  const { id, parent_session_id: parent } = row;
  await ctx.write(async (db) => {
    try {
      await db
        .insertInto("sessions")
        .values({ ...row, started_at: ctx.now() })
        .onConflict((oc) => oc.column("id").doNothing())
        .execute();
    } catch (error) {
      throw foreignKeyToNotFound(error, parent ?? id, "createSession: unknown parent");
    }
  });
  return id;
}

/** Creates the session if missing (`source` defaults to `unknown`); never overwrites. */
export async function ensureSession(ctx: PgStoreContext, input: EnsureSessionInput): Promise<void> {
  const s = optionsObject("session", input);
  const id = requireId("id", s.id);
  const source = s.source === undefined ? "unknown" : requireId("source", s.source);
  const model = optionalString("model", s.model);
  await ctx.write(async (db) => {
    await db
      .insertInto("sessions")
      .values({ id, source, model, started_at: ctx.now() })
      .onConflict((oc) => oc.column("id").doNothing())
      .execute();
  });
}

/** Marks a session ended; the first end wins. */
export async function endSession(ctx: PgStoreContext, id: string, endReason: string): Promise<void> {
  const sid = requireId("id", id);
  const reason = requireId("endReason", endReason);
  await ctx.write(async (db) => {
    await db
      .updateTable("sessions")
      .set({ ended_at: ctx.now(), end_reason: reason })
      .where("id", "=", sid)
      .where("ended_at", "is", null)
      .execute();
  });
}

/** Clears `ended_at` and `end_reason`. */
export async function reopenSession(ctx: PgStoreContext, id: string): Promise<void> {
  const sid = requireId("id", id);
  await ctx.write(async (db) => {
    await db
      .updateTable("sessions")
      .set({ ended_at: null, end_reason: null })
      .where("id", "=", sid)
      .execute();
  });
}

/** Replaces the system prompt snapshot. */
export async function updateSystemPrompt(
  ctx: PgStoreContext,
  id: string,
  systemPrompt: string,
): Promise<void> {
  const sid = requireId("id", id);
  const prompt = optionalString("systemPrompt", systemPrompt);
  await ctx.write(async (db) => {
    await db.updateTable("sessions").set({ system_prompt: prompt }).where("id", "=", sid).execute();
  });
}

/** Adds (or with `absolute`, sets) token, cost and API-call counters. */
export async function updateTokenCounts(
  ctx: PgStoreContext,
  id: string,
  input: UpdateTokenCountsInput = {},
): Promise<void> {
  const u = optionsObject("usage", input);
  if (u.absolute !== undefined && typeof u.absolute !== "boolean") {
    throw new InvalidArgumentError("absolute", "absolute must be a boolean");
  }
  const sid = requireId("id", id);
  const inputTokens = integerDelta("inputTokens", u.inputTokens);
  const output = integerDelta("outputTokens", u.outputTokens);
  const cacheRead = integerDelta("cacheReadTokens", u.cacheReadTokens);
  const cacheWrite = integerDelta("cacheWriteTokens", u.cacheWriteTokens);
  const reasoning = integerDelta("reasoningTokens", u.reasoningTokens);
  const estimated = optionalNumber("estimatedCostUsd", u.estimatedCostUsd);
  const actual = optionalNumber("actualCostUsd", u.actualCostUsd);
  const costStatus = optionalString("costStatus", u.costStatus);
  const costSource = optionalString("costSource", u.costSource);
  const pricingVersion = optionalString("pricingVersion", u.pricingVersion);
  const billingProvider = optionalString("billingProvider", u.billingProvider);
  const billingBaseUrl = optionalString("billingBaseUrl", u.billingBaseUrl);
  const billingMode = optionalString("billingMode", u.billingMode);
  const model = optionalString("model", u.model);
  const apiCalls = integerDelta("apiCallCount", u.apiCallCount);
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
  await ctx.write(async (db) => {
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
export async function getSession(ctx: PgStoreContext, id: string): Promise<SessionRow | null> {
  const sid = requireId("id", id);
  return ctx.read(async (db) => (await sessionById(db, sid)) ?? null);
}

/** One session's columns, or `undefined`. */
export async function sessionById(db: PgDb, id: string): Promise<SessionRow | undefined> {
  const row = await db.selectFrom("sessions").select(SESSION_COLUMNS).where("id", "=", id).executeTakeFirst();
  return row === undefined ? undefined : (sessionReadRow(row) as unknown as SessionRow);
}

/** An exact id, else the id that uniquely starts with `idOrPrefix`, else `null`. */
export async function resolveSessionId(ctx: PgStoreContext, idOrPrefix: string): Promise<string | null> {
  const key = requireId("idOrPrefix", idOrPrefix);
  return ctx.read(async (db) => {
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
export async function sessionCount(ctx: PgStoreContext, o?: { source?: string }): Promise<number> {
  const source = optionalString("source", optionsObject("options", o).source);
  return ctx.read(async (db) => {
    const row = await db
      .selectFrom("sessions")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .$if(Boolean(source), (qb) => qb.where("source", "=", source!))
      .executeTakeFirst();
    return row?.n ?? 0;
  });
}

/** Number of message rows, of one session when given. */
export async function messageCount(ctx: PgStoreContext, o?: { sessionId?: string }): Promise<number> {
  const sessionId = optionalString("sessionId", optionsObject("options", o).sessionId);
  return ctx.read(async (db) => {
    const row = await db
      .selectFrom("messages")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .$if(Boolean(sessionId), (qb) => qb.where("session_id", "=", sessionId!))
      .executeTakeFirst();
    return row?.n ?? 0;
  });
}
