import type { MessageRow as StoredMessageRow } from "@hermes/schema";
import { sql } from "kysely";
import { InvalidArgumentError } from "../errors.js";
import { parsePythonJson } from "../parse-python-json.js";
import { compileQuery, param } from "../prepared-query.js";
import type { StoreContext } from "../store-context.js";
import type { AppendMessageInput, MessageRow } from "../types.js";
import { optionalNumber, optionalString, options, requireId } from "../validate.js";
import type { MergeableWrite } from "../write-queue.js";
import { foreignKeyToNotFound, jsonIfTruthy } from "./sessions.js";

type InsertArgs = {
  session_id: string;
  role: string;
  content: string | null;
  tool_call_id: string | null;
  tool_calls: string | null;
  tool_name: string | null;
  timestamp: number;
  token_count: number | null;
  finish_reason: string | null;
  reasoning: string | null;
  reasoning_content: string | null;
  reasoning_details: string | null;
  codex_reasoning_items: string | null;
  codex_message_items: string | null;
};

const insertMessageQ = compileQuery<InsertArgs>((db) =>
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

/** The insert's columns, in the order of `InsertArgs` (the multi-row statement binds them so). */
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
] as const satisfies ReadonlyArray<keyof InsertArgs>;

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

/**
 * JSON text for a value that is truthy in the reference's sense (`[]`, `{}`, `""`, `0`, `false`
 * are stored as NULL), or a typed error for a value JSON cannot hold (cycles, BigInt, functions).
 */
export function encodeJson(name: string, value: unknown): string | null {
  let text: string | null | undefined;
  try {
    text = jsonIfTruthy(value);
  } catch (error) {
    throw new InvalidArgumentError(name, `${name} cannot be stored as JSON: ${(error as Error).message}`);
  }
  // JSON.stringify returns undefined (no text at all) for functions and symbols.
  if (text === undefined) {
    throw new InvalidArgumentError(name, `${name} cannot be stored as JSON (got ${typeof value})`);
  }
  return text;
}

/** Validates an append and turns it into the row to insert (timestamp filled at write time). */
export function messageRowFor(input: AppendMessageInput): { row: InsertArgs; toolCallDelta: number } {
  const m = options("message", input);
  const sessionId = requireId("sessionId", m.sessionId);
  const role = requireId("role", m.role);
  const toolCalls = m.toolCalls;
  if (toolCalls !== undefined && toolCalls !== null && typeof toolCalls !== "object") {
    throw new InvalidArgumentError("toolCalls", "toolCalls must be an array, an object or null");
  }
  const tokenCount = optionalNumber("tokenCount", m.tokenCount);
  if (tokenCount !== null && !Number.isInteger(tokenCount)) {
    throw new InvalidArgumentError("tokenCount", "tokenCount must be an integer");
  }
  // The reference counts a list by its length (an empty list adds 0) and anything else given as
  // one call (an object, even an empty one, adds 1). Only `tool_calls` counts: the role does not,
  // so a `tool` result row (which carries a tool_call_id, not tool_calls) adds 0.
  let toolCallDelta = 0;
  if (toolCalls !== undefined && toolCalls !== null) {
    toolCallDelta = Array.isArray(toolCalls) ? toolCalls.length : 1;
  }
  return {
    toolCallDelta,
    row: {
      session_id: sessionId,
      role,
      content: optionalString("content", m.content),
      tool_call_id: optionalString("toolCallId", m.toolCallId),
      tool_calls: encodeJson("toolCalls", toolCalls),
      tool_name: optionalString("toolName", m.toolName),
      timestamp: 0,
      token_count: tokenCount,
      finish_reason: optionalString("finishReason", m.finishReason),
      reasoning: optionalString("reasoning", m.reasoning),
      reasoning_content: optionalString("reasoningContent", m.reasoningContent),
      reasoning_details: encodeJson("reasoningDetails", m.reasoningDetails),
      codex_reasoning_items: encodeJson("codexReasoningItems", m.codexReasoningItems),
      codex_message_items: encodeJson("codexMessageItems", m.codexMessageItems),
    },
  };
}

/** Inserts one prepared row and bumps its session's counters; call inside a write unit. */
export function insertMessage(ctx: StoreContext, row: InsertArgs, toolCallDelta: number): number {
  let id: number;
  try {
    id = Number(ctx.conn.runOf(insertMessageQ, { ...row, timestamp: ctx.now() }).lastInsertRowid);
  } catch (error) {
    throw foreignKeyToNotFound(error, row.session_id, "appendMessage");
  }
  ctx.conn.runOf(bumpCountersQ, { id: row.session_id, tool_calls: toolCallDelta });
  return id;
}

/** A validated append waiting in the write queue. */
type PreparedMessage = { row: InsertArgs; toolCallDelta: number };

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

/** Most messages one `appendMessages` call may write (it holds the file's write lock meanwhile). */
export const MAX_APPEND_BATCH = 10_000;

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

/**
 * Parses stored `tool_calls` JSON; text that does not parse gives `[]`, as the reference (one
 * malformed row never breaks a page). NULL, and the empty text only a foreign writer could
 * store, give `null`.
 */
export function parseToolCalls(text: string | null): MessageRow["tool_calls"] {
  if (text === null || text === "") return null;
  try {
    return parsePythonJson(text) as MessageRow["tool_calls"];
  } catch {
    return [];
  }
}

/**
 * A stored row with `tool_calls` parsed. The row object is converted in place (it is fresh from
 * the driver): copying every row of a 20,000-message session would double the allocation.
 */
export function toMessageRow(row: StoredMessageRow): MessageRow {
  const converted = row as unknown as MessageRow;
  converted.tool_calls = parseToolCalls(row.tool_calls);
  return converted;
}

/**
 * Every message of a session, ordered by (timestamp, id), with `tool_calls` parsed. On a newer
 * agent's file: the messages the agent displays, in its display order (see `file-views.ts`).
 */
export function getMessages(ctx: StoreContext, sessionId: string): MessageRow[] {
  const args = { session_id: requireId("sessionId", sessionId) };
  const rows = ctx.reads
    ? ctx.conn.all<StoredMessageRow>(ctx.reads.displayMessagesSql, [args])
    : ctx.conn.allOf<StoredMessageRow, { session_id: string }>(getMessagesQ, args);
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
