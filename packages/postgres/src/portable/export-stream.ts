import {
  canonicalMessage,
  canonicalSession,
  type ExportStreamOptions,
  exportFilter,
  type PortableMessage,
  type PortableSession,
} from "@hermes/core";
import { sql } from "kysely";
import { anyText, collateC, type PgDb } from "../pg-database.js";
import { mapPgError } from "../pg-errors.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { MESSAGE_COLUMNS, SESSION_COLUMNS } from "../table-columns.js";

/** Every matching session with its messages, one at a time, from one snapshot. */
export function exportStream(ctx: PgStoreContext, o?: ExportStreamOptions): AsyncIterable<PortableSession> {
  ctx.check();
  const filter = exportFilter(o);
  return ctx.guard(exportSessions(ctx, filter));
}

/** The sessions of `filter` with their messages, paged by keyset inside one read-only snapshot. */
export async function* exportSessions(
  ctx: PgStoreContext,
  filter: ReturnType<typeof exportFilter>,
): AsyncGenerator<PortableSession> {
  // One snapshot held across the pages (and the consumer's pauses between sessions).
  let trx: Awaited<ReturnType<ReturnType<PgDb["startTransaction"]>["execute"]>>;
  try {
    trx = await ctx.db
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
        const messages: PortableMessage[] = [];
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
