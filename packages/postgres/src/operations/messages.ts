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
import { type PgDb, PREPARED } from "../pg-database.js";
import { foreignKeyToNotFound } from "../pg-errors.js";
import type { PgStoreContext } from "../pg-store-context.js";
import type { GroupResult } from "../pg-writer.js";
import { searchColumns } from "../search/pg-search-text.js";
import { MESSAGE_COLUMNS, messageReadRow } from "../table-columns.js";
import { displayedMessage } from "./agent-visibility.js";

type PreparedMessage = ReturnType<typeof messageRowFor>;

/** The stored columns an append writes, with their types for `unnest` (timestamp aside). */
const INSERTED = [
  ["session_id", "text"],
  ["role", "text"],
  ["content", "text"],
  ["tool_call_id", "text"],
  ["tool_calls", "text"],
  ["tool_name", "text"],
  ["token_count", "bigint"],
  ["finish_reason", "text"],
  ["reasoning", "text"],
  ["reasoning_content", "text"],
  ["reasoning_details", "text"],
  ["codex_reasoning_items", "text"],
  ["codex_message_items", "text"],
] as const;
const NAMES = INSERTED.map(([n]) => n).join(", ");

/**
 * Inserts `messages` (validated, in order) and bumps their sessions' counters in ONE statement:
 * the sessions are locked in id order (no deadlock between two writers' groups), rows of
 * unknown sessions are left out before any id is drawn (a refused append consumes no id, as
 * on SQLite), the rest inserted in order with their search columns, counters moved by the
 * rows written. A named prepared statement: planned once per connection. With `allOrNone`, one unknown session leaves every row out. Returns each
 * message's id (`null` where nothing was written) and the sessions that do not exist.
 */
export async function insertMessages(
  db: PgDb,
  messages: readonly PreparedMessage[],
  now: () => number,
  allOrNone: boolean,
): Promise<{ ids: Array<number | null>; missing: ReadonlySet<string> }> {
  const search = messages.map(({ row }) => searchColumns(row.content, row.tool_calls, row.tool_name));
  const sessions = [...new Set(messages.map((m) => m.row.session_id))];
  const arrays = [
    ...INSERTED.map(([n, type]) => sql`${messages.map((m) => m.row[n] ?? null)}::${sql.raw(type)}[]`),
    sql`${messages.map(() => now())}::float8[]`,
    sql`${search.map((c) => c.vector)}::text[]`,
    sql`${search.map((c) => c.grams)}::text[]`,
    sql`${messages.map((m) => m.toolCallDelta)}::bigint[]`,
  ];
  let rows: Array<{ kind: string; id: string }>;
  try {
    rows = (
      await sql<{ kind: string; id: string }>`${sql.raw(PREPARED)}WITH input AS (
          SELECT * FROM unnest(${sql.join(arrays)}) WITH ORDINALITY
            AS u(${sql.raw(NAMES)}, ts, v, g, delta, ord)),
        locked AS (
          SELECT id FROM sessions WHERE id = ANY(${sessions}::text[]) ORDER BY id FOR NO KEY UPDATE),
        accepted AS (
          SELECT * FROM input WHERE session_id IN (SELECT id FROM locked)
            ${allOrNone ? sql`AND (SELECT count(*) FROM locked) = ${sessions.length}` : sql``}),
        inserted AS (
          INSERT INTO messages (${sql.raw(NAMES)}, timestamp, search_vector, search_grams)
          SELECT ${sql.raw(NAMES)}, ts, v::tsvector, g::tsvector FROM accepted ORDER BY ord
          RETURNING id),
        counted AS (
          UPDATE sessions AS s SET message_count = s.message_count + c.n,
            tool_call_count = s.tool_call_count + c.d
          FROM (SELECT session_id, count(*) AS n, sum(delta) AS d FROM accepted GROUP BY session_id) AS c
          WHERE s.id = c.session_id)
        SELECT 'message' AS kind, id::text AS id FROM inserted
        UNION ALL SELECT 'session', id FROM locked`.execute(db)
    ).rows;
  } catch (error) {
    throw foreignKeyToNotFound(error, messages[0]!.row.session_id, "appendMessage");
  }
  const found = new Set(rows.filter((r) => r.kind === "session").map((r) => r.id));
  // Ids are drawn in the order the rows were inserted (by ord): ascending ids map back in order.
  const ids = rows
    .filter((r) => r.kind === "message")
    .map((r) => Number(r.id))
    .sort((a, b) => a - b);
  let next = 0;
  return {
    ids: messages.map((m) => (found.has(m.row.session_id) && ids.length > 0 ? ids[next++]! : null)),
    missing: new Set(sessions.filter((id) => !found.has(id))),
  };
}

/** The stored columns of an append but its session, in the lone-append statement's order. */
const LONE_COLUMNS = INSERTED.filter(([n]) => n !== "session_id");
/**
 * The lone append's statement, built once: $1 the tool-call delta, $2 the session, then the
 * other columns, the timestamp, the word vector and the gram vector.
 */
const LONE_APPEND_SQL = `WITH s AS (
    UPDATE sessions SET message_count = message_count + 1,
      tool_call_count = tool_call_count + $1::bigint
    WHERE id = $2::text RETURNING id)
  INSERT INTO messages (session_id, ${LONE_COLUMNS.map(([n]) => n).join(", ")}, timestamp,
    search_vector, search_grams)
  SELECT s.id, ${LONE_COLUMNS.map(([, type], i) => `$${i + 3}::${type}`).join(", ")},
    $${LONE_COLUMNS.length + 3}::float8, $${LONE_COLUMNS.length + 4}::tsvector,
    $${LONE_COLUMNS.length + 5}::tsvector FROM s
  RETURNING id::text AS id`;

/**
 * One message, the common group (an app appending alone): the session's counters move first
 * (that UPDATE locks the row, so no separate lock) and the row is inserted only when the session
 * exists (no id drawn otherwise), with scalar parameters instead of `unnest` over arrays, sent
 * through `query` (outside Kysely). Same effect as {@link insertMessages} for one row, with less
 * work on both sides.
 */
export async function insertOneMessage(
  query: PgStoreContext["query"],
  message: PreparedMessage,
  now: () => number,
): Promise<number | null> {
  const { row, toolCallDelta } = message;
  const search = searchColumns(row.content, row.tool_calls, row.tool_name);
  try {
    const rows = await query<{ id: string }>(LONE_APPEND_SQL, [
      toolCallDelta,
      row.session_id,
      ...LONE_COLUMNS.map(([n]) => row[n] ?? null),
      now(),
      search.vector,
      search.grams,
    ]);
    const id = rows[0]?.id;
    return id === undefined ? null : Number(id);
  } catch (error) {
    throw foreignKeyToNotFound(error, row.session_id, "appendMessage");
  }
}

const notFound = (sessionId: string) =>
  new SessionNotFoundError(sessionId, `appendMessage: session ${sessionId} does not exist`);

/**
 * Appends a message and bumps the session's counters; returns its id. Appends that queue
 * behind a running write are written together in one statement (group commit, one round trip
 * and one fsync for the group); each call still gets its own answer (`SESSION_NOT_FOUND` for
 * an unknown session fails that call only) and rows keep call order.
 */
export async function appendMessage(ctx: PgStoreContext, m: AppendMessageInput): Promise<number> {
  const prepared = messageRowFor(m);
  ctx.check();
  const id = await ctx.group("appendMessage", prepared, async (db, items): Promise<GroupResult<number>[]> => {
    const ids =
      items.length === 1
        ? [await insertOneMessage(ctx.query, items[0]!, ctx.now)]
        : (await insertMessages(db, items, ctx.now, false)).ids;
    return ids.map((id, i) => (id === null ? { error: notFound(items[i]!.row.session_id) } : { ok: id }));
  });
  // Off the append path: starts a seal of the word index's open range past its mark.
  ctx.searchIndex.noteAppended(id);
  return id;
}

/** Appends several messages all or none, in one statement; returns their ids in order. */
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
  const ids = await ctx.write(
    async (db) => {
      const { ids, missing } = await insertMessages(db, prepared, ctx.now, true);
      const first = prepared.find((p) => missing.has(p.row.session_id));
      if (first !== undefined) throw notFound(first.row.session_id);
      return ids as number[];
    },
    { transaction: false },
  );
  ctx.searchIndex.noteAppended(ids[ids.length - 1]!);
  return ids;
}

/**
 * A session's displayed messages (not superseded ones) in conversation order, every stored
 * column but the search ones, read-model fields holding NULL left out (`messageReadRow`).
 */
export async function messagesOf(db: PgDb, sessionId: string): Promise<StoredMessageRow[]> {
  const rows = await db
    .selectFrom("messages")
    .select(MESSAGE_COLUMNS)
    .where("session_id", "=", sessionId)
    .where(displayedMessage())
    .orderBy("timestamp")
    .orderBy("id")
    .execute();
  return rows.map(messageReadRow) as unknown as StoredMessageRow[];
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
