import {
  type AppendMessageInput,
  InvalidArgumentError,
  MAX_APPEND_BATCH,
  type MessageRow,
  messageRowFor,
  requireId,
  SessionNotFoundError,
  toMessageRow,
} from "@hermes/core";
import type { MessageRow as StoredMessageRow } from "@hermes/schema";
import { sql } from "kysely";
import { anyText, type PgDb } from "../pg-database.js";
import { foreignKeyToNotFound } from "../pg-errors.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { searchTokenCount, searchTrigramCount, searchVectorLiteral } from "../search/pg-search-text.js";
import { MESSAGE_COLUMNS } from "../table-columns.js";

/** Inserts one validated message with its search columns and bumps its session's counters. */
export async function insertMessage(
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

/** Appends a message and bumps the session's counters in one transaction; returns its id. */
export async function appendMessage(ctx: PgStoreContext, m: AppendMessageInput): Promise<number> {
  const prepared = messageRowFor(m);
  return ctx.write(async (db) => insertMessage(db, prepared, ctx.now()));
}

/** Appends several messages all or none, in one transaction; returns their ids in order. */
export async function appendMessages(
  ctx: PgStoreContext,
  batch: readonly AppendMessageInput[],
): Promise<number[]> {
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
  return ctx.write(async (db) => {
    // Every session checked before any insert: a refused batch consumes no id.
    const wanted = [...new Set(prepared.map((p) => p.row.session_id))];
    const found = new Set(
      (
        await db.selectFrom("sessions").select("id").where("id", "=", anyText(wanted)).forKeyShare().execute()
      ).map((r) => r.id),
    );
    const missing = wanted.find((id) => !found.has(id));
    if (missing !== undefined) {
      throw new SessionNotFoundError(missing, `appendMessage: session ${missing} does not exist`);
    }
    const ids: number[] = [];
    for (const p of prepared) ids.push(await insertMessage(db, p, ctx.now()));
    return ids;
  });
}

/** A session's messages in conversation order, every stored column but the search ones. */
export function messagesOf(db: PgDb, sessionId: string): Promise<StoredMessageRow[]> {
  return db
    .selectFrom("messages")
    .select(MESSAGE_COLUMNS)
    .where("session_id", "=", sessionId)
    .orderBy("timestamp")
    .orderBy("id")
    .execute();
}

/** Every message of a session, ordered by (timestamp, id), with `tool_calls` parsed. */
export async function getMessages(ctx: PgStoreContext, sessionId: string): Promise<MessageRow[]> {
  const id = requireId("sessionId", sessionId);
  return ctx.read(async (db) => (await messagesOf(db, id)).map(toMessageRow));
}

/** Deletes a session's messages and resets its message and tool-call counters. */
export async function clearMessages(ctx: PgStoreContext, sessionId: string): Promise<void> {
  const id = requireId("sessionId", sessionId);
  await ctx.write(async (db) => {
    await db.deleteFrom("messages").where("session_id", "=", id).execute();
    await db
      .updateTable("sessions")
      .set({ message_count: 0, tool_call_count: 0 })
      .where("id", "=", id)
      .execute();
  });
}
