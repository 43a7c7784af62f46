import {
  InvalidArgumentError,
  type IterMessagesOptions,
  iterMessagesArguments,
  type MessageRow,
  toMessageRow,
} from "@hermes/core";
import { displayedMessage } from "../operations/agent-visibility.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { MESSAGE_COLUMNS, messageReadRow } from "../table-columns.js";

/** A session's messages page by page (cursor `afterId`), in conversation order. */
export function iterMessages(
  ctx: PgStoreContext,
  sessionId: string,
  o?: IterMessagesOptions,
): AsyncIterable<MessageRow> {
  const { id, limit, pageSize, afterId } = iterMessagesArguments(sessionId, o);
  ctx.check();
  return ctx.guard(
    (async function* () {
      let afterT = Number.NEGATIVE_INFINITY;
      let cursorId = 0;
      if (afterId !== undefined) {
        const row = await ctx.read((db) =>
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
        const page = await ctx.read((db) =>
          db
            .selectFrom("messages")
            .select(MESSAGE_COLUMNS)
            .where("session_id", "=", id)
            .where((eb) => eb(eb.refTuple("timestamp", "id"), ">", eb.tuple(afterT, cursorId)))
            .where(displayedMessage())
            .orderBy("timestamp")
            .orderBy("id")
            .limit(n)
            .execute(),
        );
        const last = page[page.length - 1];
        for (const row of page) yield toMessageRow(messageReadRow(row) as Parameters<typeof toMessageRow>[0]);
        left -= page.length;
        if (page.length < n || last === undefined) return;
        afterT = last.timestamp;
        cursorId = last.id;
      }
    })(),
  );
}
