import {
  type AutoPruneOptions,
  type AutoPruneResult,
  EXPORT_ALL_LIMIT,
  InvalidArgumentError,
  type MessageRow,
  nonNegativeDuration,
  optionalString,
  optionsObject,
  type PruneSessionsOptions,
  pruneVisibilityArguments,
  removeSessionFiles,
  requireId,
  runAutoPrune,
  type SessionExport,
  type SessionWithLastActive,
  sessionsDirOf,
  toMessageRow,
} from "@hermes/core";
import { sql } from "kysely";
import { anyText, collateC } from "../pg-database.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { S_COLUMNS, sessionReadRow } from "../table-columns.js";
import { listedSession } from "./agent-visibility.js";
import { messagesOf } from "./messages.js";
import { sessionById } from "./sessions.js";

/** A session with all its messages, or `null`. */
export async function exportSession(ctx: PgStoreContext, id: string): Promise<SessionExport | null> {
  const sid = requireId("id", id);
  return ctx.snapshot(async (db) => {
    const session = await sessionById(db, sid);
    if (session === undefined) return null;
    const messages = (await messagesOf(db, sid)).map(toMessageRow);
    return { ...session, messages };
  });
}

/** Every session (or one source's) with its messages, most recently active first. */
export async function exportAll(
  ctx: PgStoreContext,
  o?: {
    source?: string;
  },
): Promise<Array<SessionWithLastActive & { messages: MessageRow[] }>> {
  const source = optionalString("source", optionsObject("options", o).source);
  return ctx.snapshot(async (db) => {
    const rows = (await db
      .selectFrom("sessions as s")
      .leftJoin(
        (eb) =>
          eb
            .selectFrom("messages")
            .select((e) => ["session_id", e.fn.max("timestamp").as("last_active")])
            .groupBy("session_id")
            .as("m"),
        (join) => join.onRef("m.session_id", "=", "s.id"),
      )
      .select(S_COLUMNS)
      .select((eb) => eb.fn.coalesce("m.last_active", "s.started_at").as("last_active"))
      .$if(source !== null && source !== "", (qb) => qb.where("s.source", "=", source!))
      .orderBy("last_active", "desc")
      .orderBy("s.started_at", "desc")
      .orderBy(collateC("s.id"), "desc")
      .limit(EXPORT_ALL_LIMIT)
      .execute()) as unknown as SessionWithLastActive[];
    const out: Array<SessionWithLastActive & { messages: MessageRow[] }> = [];
    for (const row of rows) {
      const messages = (await messagesOf(db, row.id)).map(toMessageRow);
      out.push({ ...sessionReadRow(row), messages });
    }
    return out;
  });
}

/** Deletes a session and its messages, orphaning its children; `false` when unknown. */
export async function deleteSession(
  ctx: PgStoreContext,
  id: string,
  o?: { sessionsDir?: string },
): Promise<boolean> {
  const sid = requireId("id", id);
  const dir = sessionsDirOf(optionsObject("options", o).sessionsDir);
  const deleted = await ctx.write(async (db) => {
    const found = await db
      .selectFrom("sessions")
      .select("id")
      .where("id", "=", sid)
      .forUpdate()
      .executeTakeFirst();
    if (found === undefined) return false;
    await db
      .updateTable("sessions")
      .set({ parent_session_id: null })
      .where("parent_session_id", "=", sid)
      .execute();
    await db.deleteFrom("messages").where("session_id", "=", sid).execute();
    await db.deleteFrom("sessions").where("id", "=", sid).execute();
    return true;
  });
  if (deleted && dir !== null) await removeSessionFiles(dir, [sid]);
  return deleted;
}

/**
 * Deletes ended sessions older than `olderThanDays` (default 90); returns how many. Never a
 * pinned session (the agent never prunes one); archived or hidden ones (sessions migrated from
 * a newer agent's file) only with `includeArchived` / `includeHidden`, as the listings.
 */
export async function pruneSessions(ctx: PgStoreContext, o?: PruneSessionsOptions): Promise<number> {
  const opts = optionsObject("options", o);
  const visibility = pruneVisibilityArguments(opts);
  const listed = listedSession("sessions", visibility);
  const days = nonNegativeDuration("olderThanDays", opts.olderThanDays, 90);
  const source = optionalString("source", opts.source);
  const dir = sessionsDirOf(opts.sessionsDir);
  const removed = await ctx.write(async (db) => {
    const cutoff = ctx.now() - days * 86_400;
    const ids = (
      await db
        .selectFrom("sessions")
        .select("id")
        .where("started_at", "<", cutoff)
        .where("ended_at", "is not", null)
        .where(sql<boolean>`pinned IS NOT TRUE`)
        .$if(listed !== null, (qb) => qb.where(listed!))
        .$if(source !== null, (qb) => qb.where("source", "=", source!))
        .forUpdate()
        .execute()
    ).map((r) => r.id);
    if (ids.length === 0) return [];
    await db
      .updateTable("sessions")
      .set({ parent_session_id: null })
      .where("parent_session_id", "=", anyText(ids))
      .execute();
    await db.deleteFrom("messages").where("session_id", "=", anyText(ids)).execute();
    await db.deleteFrom("sessions").where("id", "=", anyText(ids)).execute();
    return ids;
  });
  if (dir !== null) await removeSessionFiles(dir, removed);
  return removed.length;
}

/** The value stored under `key` in `state_meta`, or `null`. */
export async function getMeta(ctx: PgStoreContext, key: string): Promise<string | null> {
  const k = requireId("key", key);
  return ctx.read(
    async (db) =>
      (await db.selectFrom("state_meta").select("value").where("key", "=", k).executeTakeFirst())?.value ??
      null,
  );
}

/** Stores `value` under `key` in `state_meta`. */
export async function setMeta(ctx: PgStoreContext, key: string, value: string): Promise<void> {
  const k = requireId("key", key);
  if (typeof value !== "string") throw new InvalidArgumentError("value", "value must be a string");
  await ctx.write(async (db) => {
    await db
      .insertInto("state_meta")
      .values({ key: k, value })
      .onConflict((oc) => oc.column("key").doUpdateSet((eb) => ({ value: eb.ref("excluded.value") })))
      .execute();
  });
}

/**
 * PostgreSQL's equivalent of SQLite's `VACUUM`: `VACUUM (ANALYZE)` of the store's tables,
 * which makes the space of deleted rows reusable and refreshes the planner's statistics
 * (it does not shrink the files; `VACUUM FULL` would lock the tables). Queued after the
 * store's earlier writes, outside a transaction.
 */
export async function vacuum(ctx: PgStoreContext): Promise<void> {
  await ctx.write(
    async (db) => {
      await sql`VACUUM (ANALYZE) sessions, messages, state_meta`.execute(db);
    },
    { transaction: false },
  );
}

/** Startup housekeeping: prune (and vacuum) at most once per `minIntervalHours`. Never throws. */
export function maybeAutoPruneAndVacuum(ctx: PgStoreContext, o?: AutoPruneOptions): Promise<AutoPruneResult> {
  return runAutoPrune(
    {
      getMeta: (key) => getMeta(ctx, key),
      setMeta: (key, value) => setMeta(ctx, key, value),
      prune: (options) => pruneSessions(ctx, options),
      vacuum: () => vacuum(ctx),
      now: () => ctx.now(),
    },
    o,
  );
}
