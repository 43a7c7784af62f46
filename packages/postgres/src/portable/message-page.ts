import {
  InvalidArgumentError,
  type MessagePage,
  type MessagePageArguments,
  type MessagePageOptions,
  messagePageArguments,
  pageAround,
  toMessageRow,
} from "@hermes/core";
import { displayedMessage } from "../operations/agent-visibility.js";
import type { PgDb } from "../pg-database.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { MESSAGE_COLUMNS, messageReadRow } from "../table-columns.js";

/** A page of a session's messages with the counts before and after it (`getMessagePage` of `SessionStore`). */
export async function getMessagePage(
  ctx: PgStoreContext,
  sessionId: string,
  o?: MessagePageOptions,
): Promise<MessagePage> {
  const a = messagePageArguments(sessionId, o);
  return ctx.snapshot((db) => messagePage(db, a));
}

// Keyset reads on (timestamp, id) along idx_messages_session, inside one snapshot.
async function messagePage(db: PgDb, a: MessagePageArguments): Promise<MessagePage> {
  const columns = MESSAGE_COLUMNS;
  const { id, limit, anchor } = a;
  const forward = (t: number, after: number, n: number) =>
    db
      .selectFrom("messages")
      .select(columns)
      .where("session_id", "=", id)
      .where((eb) => eb(eb.refTuple("timestamp", "id"), ">", eb.tuple(t, after)))
      .where(displayedMessage())
      .orderBy("timestamp")
      .orderBy("id")
      .limit(n)
      .execute();
  const backward = async (t: number, before: number, n: number) =>
    (
      await db
        .selectFrom("messages")
        .select(columns)
        .where("session_id", "=", id)
        .where((eb) => eb(eb.refTuple("timestamp", "id"), "<", eb.tuple(t, before)))
        .where(displayedMessage())
        .orderBy("timestamp", "desc")
        .orderBy("id", "desc")
        .limit(n)
        .execute()
    ).reverse();
  const count = async (op: "<" | ">", t: number, at: number) =>
    (
      await db
        .selectFrom("messages")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("session_id", "=", id)
        .where((eb) => eb(eb.refTuple("timestamp", "id"), op, eb.tuple(t, at)))
        .where(displayedMessage())
        .executeTakeFirst()
    )?.n ?? 0;
  type Row = Awaited<ReturnType<typeof forward>>[number];
  let rows: Row[];
  if (!("messageId" in anchor)) {
    rows =
      anchor.kind === "start"
        ? await forward(Number.NEGATIVE_INFINITY, 0, limit)
        : await backward(Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER, limit);
  } else {
    const cursor = await db
      .selectFrom("messages")
      .select("timestamp")
      .where("id", "=", anchor.messageId)
      .where("session_id", "=", id)
      .executeTakeFirst();
    if (cursor === undefined) {
      throw new InvalidArgumentError(
        "messageId",
        `message ${anchor.messageId} is not a message of session ${id}`,
      );
    }
    const t = cursor.timestamp;
    const m = anchor.messageId;
    if (anchor.kind === "after") rows = await forward(t, m, limit);
    else if (anchor.kind === "before") rows = await backward(t, m, limit);
    else {
      const later = await forward(t, m - 1, limit - pageAround(limit));
      const earlier = await backward(t, m, limit - later.length);
      const end = later[later.length - 1];
      const more =
        end !== undefined && earlier.length + later.length < limit
          ? await forward(end.timestamp, end.id, limit - earlier.length - later.length)
          : [];
      rows = [...earlier, ...later, ...more];
    }
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (first === undefined || last === undefined) {
    const total = await count(">", Number.NEGATIVE_INFINITY, 0);
    const forwardEnd = anchor.kind === "after";
    return { messages: [], before: forwardEnd ? total : 0, after: forwardEnd ? 0 : total };
  }
  return {
    messages: rows.map((r) => toMessageRow(messageReadRow(r) as Parameters<typeof toMessageRow>[0])),
    before: await count("<", first.timestamp, first.id),
    after: await count(">", last.timestamp, last.id),
  };
}
