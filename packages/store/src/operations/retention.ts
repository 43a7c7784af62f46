import {
  EXPORT_ALL_LIMIT,
  InvalidArgumentError,
  type MessageRow,
  nonNegativeDuration,
  optionalString,
  optionsObject,
  type PruneSessionsOptions,
  pruneVisibilityArguments,
  requireId,
  type SessionExport,
  type SessionWithLastActive,
  sessionsDirOf,
  toSessionViewFields,
} from "@hermes/core";
import { sql } from "kysely";
import { compileQuery, param } from "../prepared-query.js";
import { readSnapshot } from "../read-snapshot.js";
import type { StoreContext } from "../store-context.js";
import { getMessages } from "./messages.js";
import { getSession } from "./sessions.js";

// Export -------------------------------------------------------------------------------------

/** A session with all its messages (`getSession` + `getMessages`), or `null` when unknown. */
export function exportSession(ctx: StoreContext, id: string): SessionExport | null {
  const sessionId = requireId("id", id);
  return readSnapshot(ctx, () => {
    const session = getSession(ctx, sessionId);
    if (session === null) return null;
    return { ...session, messages: getMessages(ctx, sessionId) };
  });
}

// The reference exports the rows of `search_sessions(source, limit=100000)`: every session
// column plus `last_active` (newest message, else the start), most recently used first.
const lastActive = sql<number>`COALESCE(m.last_active, s.started_at)`;
const exportRowsBase = (where: "all" | "source") =>
  compileQuery<{ source: string; limit: number }>((db) => {
    let q = db
      .selectFrom("sessions as s")
      .leftJoin(
        (eb) =>
          eb
            .selectFrom("messages")
            .select(["session_id", (e) => e.fn.max("timestamp").as("last_active")])
            .groupBy("session_id")
            .as("m"),
        (on) => on.onRef("m.session_id", "=", "s.id"),
      )
      .selectAll("s")
      .select(lastActive.as("last_active"));
    if (where === "source") q = q.where("s.source", "=", param("source"));
    return q
      .orderBy("last_active", "desc")
      .orderBy("s.started_at", "desc")
      .orderBy("s.id", "desc")
      .limit(param("limit"));
  });
const exportRowsAllQ = exportRowsBase("all");
const exportRowsSourceQ = exportRowsBase("source");

/**
 * Every session (or those of one `source`) with its messages, in `searchSessions` order
 * (`last_active` descending), at most {@link EXPORT_ALL_LIMIT} sessions. One consistent snapshot.
 */
export function exportAll(
  ctx: StoreContext,
  o?: { source?: string },
): Array<SessionWithLastActive & { messages: MessageRow[] }> {
  // A falsy source means "all", as the reference's `if source:`.
  const source = optionalString("source", optionsObject("options", o).source);
  return readSnapshot(ctx, () => {
    const rows = source
      ? ctx.conn.allOf<SessionWithLastActive, { source: string; limit: number }>(exportRowsSourceQ, {
          source,
          limit: EXPORT_ALL_LIMIT,
        })
      : ctx.conn.allOf<SessionWithLastActive, { source: string; limit: number }>(exportRowsAllQ, {
          source: "",
          limit: EXPORT_ALL_LIMIT,
        });
    return rows.map((row) => ({ ...toSessionViewFields(row), messages: getMessages(ctx, row.id) }));
  });
}

// Delete and prune ---------------------------------------------------------------------------

const sessionExistsQ = compileQuery<{ id: string }>((db) =>
  db.selectFrom("sessions").select("id").where("id", "=", param("id")),
);
// Children are orphaned, never deleted: they stay reachable on their own, and the FK on
// parent_session_id would otherwise block the delete.
const orphanChildrenQ = compileQuery<{ id: string }>((db) =>
  db.updateTable("sessions").set({ parent_session_id: null }).where("parent_session_id", "=", param("id")),
);
const deleteSessionMessagesQ = compileQuery<{ id: string }>((db) =>
  db.deleteFrom("messages").where("session_id", "=", param("id")),
);
const deleteSessionRowQ = compileQuery<{ id: string }>((db) =>
  db.deleteFrom("sessions").where("id", "=", param("id")),
);

/** `deleteSession`'s arguments, checked: the session id and the transcript folder (or `null`). */
export function deleteArguments(
  id: string,
  o?: { sessionsDir?: string },
): { id: string; dir: string | null } {
  return { id: requireId("id", id), dir: sessionsDirOf(optionsObject("options", o).sessionsDir) };
}

/**
 * Deletes a session and its messages in one write unit, orphaning (not deleting) its children.
 * `false` for an unknown session. Its transcript files are the caller's (`WriteRouter`).
 */
export async function deleteSessionRow(ctx: StoreContext, id: string): Promise<boolean> {
  const sessionId = requireId("id", id);
  return ctx.writes.run("deleteSession", () => {
    if (ctx.conn.getOf(sessionExistsQ, { id: sessionId }) === undefined) return false;
    ctx.conn.runOf(orphanChildrenQ, { id: sessionId });
    ctx.conn.runOf(deleteSessionMessagesQ, { id: sessionId });
    ctx.conn.runOf(deleteSessionRowQ, { id: sessionId });
    return true;
  });
}

// Only ended sessions are candidates (an active one may still be written), aged by start time.
const pruneCandidatesQ = compileQuery<{ cutoff: number }>((db) =>
  db
    .selectFrom("sessions")
    .select("id")
    .where("started_at", "<", param("cutoff"))
    .where("ended_at", "is not", null),
);
const pruneCandidatesSourceQ = compileQuery<{ cutoff: number; source: string }>((db) =>
  db
    .selectFrom("sessions")
    .select("id")
    .where("started_at", "<", param("cutoff"))
    .where("ended_at", "is not", null)
    .where("source", "=", param("source")),
);
// The candidate set is variable in size; one JSON array parameter keeps each statement compiled
// and prepared once.
const idsIn = sql<string>`(SELECT value FROM json_each(${param("ids")}))`;
const orphanChildrenOfQ = compileQuery<{ ids: string }>((db) =>
  db.updateTable("sessions").set({ parent_session_id: null }).where("parent_session_id", "in", idsIn),
);
const deleteMessagesOfQ = compileQuery<{ ids: string }>((db) =>
  db.deleteFrom("messages").where("session_id", "in", idsIn),
);
const deleteSessionsQ = compileQuery<{ ids: string }>((db) =>
  db.deleteFrom("sessions").where("id", "in", idsIn),
);

/** Options of `pruneSessions`. */
export type PruneOptions = PruneSessionsOptions;

/**
 * `pruneSessions`' options, checked, with their defaults (`dir`: the transcript folder or
 * `null`). The visibility options are checked too; a file this store writes (v11) has no
 * pinned, archived or hidden flags, so they select nothing here (a newer agent's file, which
 * has them, is never written).
 */
export function pruneArguments(o?: PruneOptions): {
  days: number;
  source: string | null;
  dir: string | null;
} {
  const opts = optionsObject("options", o);
  pruneVisibilityArguments(opts);
  return {
    days: nonNegativeDuration("olderThanDays", opts.olderThanDays, 90),
    source: optionalString("source", opts.source),
    dir: sessionsDirOf(opts.sessionsDir),
  };
}

/**
 * Deletes ended sessions that started more than `olderThanDays` (default 90) days ago,
 * optionally of one `source`, with their messages, in one write unit; sessions whose parent is
 * pruned are orphaned, never deleted. Active sessions are never pruned. Returns their ids (the
 * caller removes their transcript files after COMMIT: see `WriteRouter.pruneSessions`).
 */
export async function pruneSessionIds(ctx: StoreContext, o?: PruneOptions): Promise<string[]> {
  const { days, source } = pruneArguments(o);
  return ctx.writes.run("pruneSessions", () => {
    const cutoff = ctx.now() - days * 86_400;
    const rows = source
      ? ctx.conn.allOf<{ id: string }, { cutoff: number; source: string }>(pruneCandidatesSourceQ, {
          cutoff,
          source,
        })
      : ctx.conn.allOf<{ id: string }, { cutoff: number }>(pruneCandidatesQ, { cutoff });
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const args = { ids: JSON.stringify(ids) };
    ctx.conn.runOf(orphanChildrenOfQ, args);
    ctx.conn.runOf(deleteMessagesOfQ, args);
    ctx.conn.runOf(deleteSessionsQ, args);
    return ids;
  });
}

// Metadata -----------------------------------------------------------------------------------

const getMetaQ = compileQuery<{ key: string }>((db) =>
  db.selectFrom("state_meta").select("value").where("key", "=", param("key")),
);
const setMetaQ = compileQuery<{ key: string; value: string }>((db) =>
  db
    .insertInto("state_meta")
    .values({ key: param("key"), value: param("value") })
    .onConflict((oc) => oc.column("key").doUpdateSet({ value: sql`excluded.value` })),
);

/** The value stored under `key` in `state_meta`, or `null`. */
export function getMeta(ctx: StoreContext, key: string): string | null {
  const row = ctx.conn.getOf<{ value: string | null }, { key: string }>(getMetaQ, {
    key: requireId("key", key),
  });
  return row?.value ?? null;
}

/** Stores `value` under `key` in `state_meta` (insert or replace). */
export async function setMeta(ctx: StoreContext, key: string, value: string): Promise<void> {
  const args = { key: requireId("key", key), value };
  if (typeof value !== "string") {
    throw new InvalidArgumentError("value", "value must be a string");
  }
  await ctx.writes.run("setMeta", () => {
    ctx.conn.runOf(setMetaQ, args);
  });
}

// Space reclamation --------------------------------------------------------------------------

/**
 * Rewrites the file to reclaim the pages freed by deletes: a best-effort TRUNCATE checkpoint,
 * then `VACUUM`, then another best-effort TRUNCATE so the rewritten pages do not linger in the
 * WAL.
 *
 * VACUUM cannot run inside a transaction, so it is queued as an exclusive unit: it runs after
 * every earlier write of this store has settled, before any later one starts, and waits on
 * timers (like any write) while another connection holds the lock, up to the write deadline.
 */
export async function vacuum(ctx: StoreContext): Promise<void> {
  await ctx.writes.exclusive("vacuum", () => {
    ctx.writes.checkpoint("TRUNCATE");
    ctx.conn.exec("VACUUM");
    ctx.writes.checkpoint("TRUNCATE");
  });
}
