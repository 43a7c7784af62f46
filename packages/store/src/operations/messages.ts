import {
  type AppendMessageInput,
  InvalidArgumentError,
  MAX_APPEND_BATCH,
  type MessageRow,
  messageRowFor,
  type NewMessageRow,
  type PreparedMessage,
  requireId,
  toMessageRow,
} from "@hermes/core";
import type { MessageRow as StoredMessageRow } from "@hermes/schema";
import { sql } from "kysely";
import { compileQuery, param } from "../prepared-query.js";
import type { StoreContext } from "../store-context.js";
import type { MergeableWrite } from "../write/mergeable-write.js";
import { foreignKeyToNotFound } from "./sessions.js";

const insertMessageQ = compileQuery<NewMessageRow>((db) =>
  db.insertInto("messages").values({
    session_id: param("session_id"),
    role: param("role"),
    content: param("content"),
    tool_call_id: param("tool_call_id"),
    tool_calls: param("tool_calls"),
    tool_name: param("tool_name"),
    timestamp: param("timestamp"),
    token_count: param("token_count"),
    finish_reason: param("finish_reason"),
    reasoning: param("reasoning"),
    reasoning_content: param("reasoning_content"),
    reasoning_details: param("reasoning_details"),
    codex_reasoning_items: param("codex_reasoning_items"),
    codex_message_items: param("codex_message_items"),
  }),
);

/** The insert's columns, in the order of `NewMessageRow` (the multi-row statement binds them so). */
const INSERT_COLUMNS = [
  "session_id",
  "role",
  "content",
  "tool_call_id",
  "tool_calls",
  "tool_name",
  "timestamp",
  "token_count",
  "finish_reason",
  "reasoning",
  "reasoning_content",
  "reasoning_details",
  "codex_reasoning_items",
  "codex_message_items",
] as const satisfies ReadonlyArray<keyof NewMessageRow>;

/** Most rows per multi-row INSERT: 14 parameters each stays far below SQLite's variable limit. */
const ROWS_PER_INSERT = 256;

/** `INSERT … VALUES (…), (…) RETURNING id` for `n` rows, built once per size. */
const insertManySql = new Map<number, string>();
function insertManyStatement(n: number): string {
  let sql = insertManySql.get(n);
  if (sql === undefined) {
    const row = `(${INSERT_COLUMNS.map(() => "?").join(", ")})`;
    sql =
      `insert into "messages" (${INSERT_COLUMNS.map((c) => `"${c}"`).join(", ")}) values ` +
      `${Array.from({ length: n }, () => row).join(", ")} returning "id"`;
    insertManySql.set(n, sql);
  }
  return sql;
}

const bumpCountersByQ = compileQuery<{ id: string; messages: number; tool_calls: number }>((db) =>
  db
    .updateTable("sessions")
    .set({
      message_count: sql`message_count + ${param("messages")}`,
      tool_call_count: sql`tool_call_count + ${param("tool_calls")}`,
    })
    .where("id", "=", param("id")),
);

const bumpCountersQ = compileQuery<{ id: string; tool_calls: number }>((db) =>
  db
    .updateTable("sessions")
    .set({
      message_count: sql`message_count + 1`,
      tool_call_count: sql`tool_call_count + ${param("tool_calls")}`,
    })
    .where("id", "=", param("id")),
);

/** Inserts one prepared row and bumps its session's counters; call inside a write unit. */
export function insertMessage(ctx: StoreContext, row: NewMessageRow, toolCallDelta: number): number {
  let id: number;
  try {
    id = Number(ctx.conn.runOf(insertMessageQ, { ...row, timestamp: ctx.now() }).lastInsertRowid);
  } catch (error) {
    throw foreignKeyToNotFound(error, row.session_id, "appendMessage");
  }
  ctx.conn.runOf(bumpCountersQ, { id: row.session_id, tool_calls: toolCallDelta });
  return id;
}

/**
 * Inserts several prepared rows with multi-row statements (timestamps taken now, in order) and
 * bumps each session's counters once; call inside a write unit. Returns the row ids in order.
 * Unlike one `insertMessage` per row, the FTS indexes flush once for all of them (every
 * statement inside a transaction makes FTS5 write its pending terms out as a new segment).
 * Any failure (an unknown session) throws the statement's error: the caller rolls back and
 * writes the rows one by one to tell which one failed.
 */
export function insertMessages(ctx: StoreContext, items: readonly PreparedMessage[]): number[] {
  const ids: number[] = [];
  const bumps = new Map<string, { messages: number; tool_calls: number }>();
  for (let start = 0; start < items.length; start += ROWS_PER_INSERT) {
    const chunk = items.slice(start, start + ROWS_PER_INSERT);
    const args: unknown[] = [];
    for (const { row, toolCallDelta } of chunk) {
      const now = ctx.now();
      for (const column of INSERT_COLUMNS) args.push(column === "timestamp" ? now : row[column]);
      const bump = bumps.get(row.session_id);
      if (bump === undefined) bumps.set(row.session_id, { messages: 1, tool_calls: toolCallDelta });
      else {
        bump.messages++;
        bump.tool_calls += toolCallDelta;
      }
    }
    const returned = ctx.conn.statement(insertManyStatement(chunk.length)).all(...args) as Array<{
      id: number | bigint;
    }>;
    // RETURNING's row order is unspecified; AUTOINCREMENT ids grow in insertion order.
    const chunkIds = returned.map((r) => Number(r.id)).sort((a, b) => a - b);
    if (chunkIds.length !== chunk.length) {
      throw new Error(`inserted ${chunkIds.length} rows for ${chunk.length} messages`);
    }
    ids.push(...chunkIds);
  }
  for (const [id, bump] of bumps) ctx.conn.runOf(bumpCountersByQ, { id, ...bump });
  return ids;
}

/** Merges concurrent appends of one group into one multi-row insert (see `insertMessages`). */
function appendMerge(ctx: StoreContext, item: PreparedMessage): MergeableWrite<number> {
  return {
    key: "appendMessage",
    item,
    many: (items) => insertMessages(ctx, items as readonly PreparedMessage[]),
  };
}

/**
 * Applies appends that another process posted for this one to commit (see SharedCommits): the
 * same multi-row insert as a local group. The items were validated by their owner; their shape
 * is checked again here, since they come from a file.
 */
export function sharedAppends(ctx: StoreContext): (items: readonly unknown[]) => number[] {
  return (items) => {
    for (const item of items) {
      if (!isPreparedMessage(item)) throw new Error("malformed shared append");
    }
    return insertMessages(ctx, items as readonly PreparedMessage[]);
  };
}

function isPreparedMessage(item: unknown): item is PreparedMessage {
  if (typeof item !== "object" || item === null) return false;
  const { row, toolCallDelta } = item as Partial<PreparedMessage>;
  if (typeof toolCallDelta !== "number" || !Number.isInteger(toolCallDelta)) return false;
  if (typeof row !== "object" || row === null || typeof row.session_id !== "string") return false;
  const fields = row as Record<string, unknown>;
  for (const column of INSERT_COLUMNS) {
    const value = fields[column];
    if (value !== null && typeof value !== "string" && typeof value !== "number") return false;
  }
  return true;
}

/**
 * Appends one message (timestamp = now) and, in the same write unit, bumps the session's
 * `message_count` and `tool_call_count`. An unknown session is `SESSION_NOT_FOUND`, with nothing
 * written. Returns the new row id. Appends that share a group commit are written by one
 * multi-row statement when they all succeed (one FTS flush for the group).
 */
export async function appendMessage(ctx: StoreContext, input: AppendMessageInput): Promise<number> {
  const prepared = messageRowFor(input);
  const { row, toolCallDelta } = prepared;
  return ctx.writes.run(
    "appendMessage",
    () => insertMessage(ctx, row, toolCallDelta),
    appendMerge(ctx, prepared),
  );
}

/**
 * Appends several messages (one agent turn) as one write unit: all are written, with their
 * sessions' counters, or none (any invalid message or unknown session rejects the whole batch).
 * Returns the row ids in order. Every message is validated before anything is queued.
 */
export async function appendMessages(
  ctx: StoreContext,
  batch: readonly AppendMessageInput[],
): Promise<number[]> {
  if (!Array.isArray(batch)) {
    throw new InvalidArgumentError("messages", "appendMessages expects an array of messages");
  }
  // One batch is one transaction: every other writer of the file waits while it runs.
  if (batch.length > MAX_APPEND_BATCH) {
    throw new InvalidArgumentError(
      "messages",
      `appendMessages takes at most ${MAX_APPEND_BATCH} messages (got ${batch.length}); split the batch`,
    );
  }
  const prepared = batch.map((m) => messageRowFor(m));
  if (prepared.length === 0) return [];
  return ctx.writes.run("appendMessages", () =>
    prepared.map(({ row, toolCallDelta }) => insertMessage(ctx, row, toolCallDelta)),
  );
}

const getMessagesQ = compileQuery<{ session_id: string }>((db) =>
  db
    .selectFrom("messages")
    .selectAll()
    .where("session_id", "=", param("session_id"))
    .orderBy("timestamp")
    .orderBy("id"),
);

/** Every message of a session, ordered by (timestamp, id), with `tool_calls` parsed. */
export function getMessages(ctx: StoreContext, sessionId: string): MessageRow[] {
  const rows = ctx.conn.allOf<StoredMessageRow, { session_id: string }>(getMessagesQ, {
    session_id: requireId("sessionId", sessionId),
  });
  for (const row of rows) toMessageRow(row);
  return rows as unknown as MessageRow[];
}

const deleteMessagesQ = compileQuery<{ session_id: string }>((db) =>
  db.deleteFrom("messages").where("session_id", "=", param("session_id")),
);
const resetCountersQ = compileQuery<{ id: string }>((db) =>
  db.updateTable("sessions").set({ message_count: 0, tool_call_count: 0 }).where("id", "=", param("id")),
);

/**
 * Deletes a session's messages (the FTS triggers clean both indexes) and resets its
 * `message_count` and `tool_call_count` to 0; token and cost counters are kept.
 */
export async function clearMessages(ctx: StoreContext, sessionId: string): Promise<void> {
  const id = requireId("sessionId", sessionId);
  await ctx.writes.run("clearMessages", () => {
    ctx.conn.runOf(deleteMessagesQ, { session_id: id });
    ctx.conn.runOf(resetCountersQ, { id });
  });
}
