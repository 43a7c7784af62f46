import { setImmediate as nextTick } from "node:timers/promises";
import {
  canonicalMessage,
  canonicalSession,
  type ExportEvent,
  type ExportFilter,
  type ExportStreamOptions,
  exportFilter,
  type PortableMessage,
  type PortableSession,
} from "@hermes/core";
import { DatabaseConnection } from "../database-connection.js";
import { mapSqliteError } from "../sqlite-errors.js";
import type { StoreContext } from "../store-context.js";
import { MESSAGE_COLUMN_SQL, SESSION_COLUMN_SQL } from "./column-sql.js";

/** Sessions read per page; messages read per page. Small enough to keep memory flat. */
const SESSION_PAGE = 200;
const MESSAGE_PAGE = 1000;

// Keyset pagination on (started_at, id) and (timestamp, id): each page is an index range scan
// (idx_sessions_started, idx_messages_session), so the cost per page does not grow with the
// position, unlike OFFSET. `timestamp >= ? AND (timestamp > ? OR id > ?)` keeps the range on
// the index; a row-value comparison would not use it.
const sessionsPageSql = (columns: string) => `SELECT ${columns} FROM sessions
  WHERE started_at >= :after_t AND (started_at > :after_t OR id > :after_id)
    AND (:source IS NULL OR source = :source)
    AND (:since IS NULL OR started_at >= :since)
    AND (:ids IS NULL OR id IN (SELECT value FROM json_each(:ids)))
  ORDER BY started_at, id LIMIT :limit`;
const SESSIONS_PAGE_SQL = sessionsPageSql(SESSION_COLUMN_SQL);
// A newer agent's file: its `sessions` view, the read model's fields included (file-views.ts).
const VIEW_SESSIONS_PAGE_SQL = sessionsPageSql("*");

const MESSAGES_PAGE_SQL = `SELECT ${MESSAGE_COLUMN_SQL} FROM messages
  WHERE session_id = :session_id AND timestamp >= :after_t AND (timestamp > :after_t OR id > :after_id)
  ORDER BY timestamp, id LIMIT :limit`;

/**
 * A read-only connection holding one read transaction for the whole export, so the export is a
 * consistent snapshot (a session's counters match its messages) while writers of this and
 * other processes go on: in WAL mode a reader never blocks them.
 */
function openSnapshot(ctx: StoreContext): { conn: DatabaseConnection; release: () => void } {
  try {
    // A read-only store reads through its own view of the file (no sidecar it would not need,
    // a newer agent's visibility rules); an in-memory snapshot needs no transaction.
    if (ctx.readOnly) {
      const lease = ctx.readOnly.reader();
      if (lease.own) lease.conn.exec("BEGIN");
      return lease;
    }
    const conn = new DatabaseConnection(ctx.path, {
      busyTimeoutMs: 100,
      synchronous: "FULL",
      journalSizeLimit: 0,
      readOnly: true,
    });
    conn.exec("BEGIN");
    return { conn, release: () => conn.close() };
  } catch (error) {
    throw mapSqliteError(error, ctx.path);
  }
}

/**
 * The export as a stream of events, in constant memory whatever the size of a session: pages of
 * at most 200 sessions and 1,000 messages, with a turn of the event loop between pages.
 * Sessions come in `(started_at, id)` order, messages in `(timestamp, id)` order (the order an
 * import compares in). A newer agent's file gives every row, rewound and superseded ones too,
 * with the read model's fields (`view_state`, uids, flags): the export is lossless.
 */
export async function* exportEvents(
  ctx: StoreContext,
  filter: ExportFilter,
): AsyncGenerator<ExportEvent, void, undefined> {
  const { conn, release } = openSnapshot(ctx);
  const sessionsSql = ctx.reads ? VIEW_SESSIONS_PAGE_SQL : SESSIONS_PAGE_SQL;
  const messagesSql = ctx.reads?.auditPageSql ?? MESSAGES_PAGE_SQL;
  try {
    let afterT = Number.NEGATIVE_INFINITY;
    let afterId = "";
    for (;;) {
      const sessions = conn.all<Record<string, unknown>>(sessionsSql, [
        { after_t: afterT, after_id: afterId, ...filter, limit: SESSION_PAGE },
      ]);
      for (const raw of sessions) {
        const session = canonicalSession(raw);
        yield { kind: "session", session };
        let mT = Number.NEGATIVE_INFINITY;
        let mId = 0;
        for (;;) {
          const page = conn.all<Record<string, unknown>>(messagesSql, [
            { session_id: session.id, after_t: mT, after_id: mId, limit: MESSAGE_PAGE },
          ]);
          if (page.length === 0) break;
          const messages = page.map(canonicalMessage);
          const last = messages[messages.length - 1]!;
          mT = last.timestamp;
          mId = last.id;
          yield { kind: "messages", messages };
          if (page.length < MESSAGE_PAGE) break;
          await nextTick();
        }
        yield { kind: "end", session };
      }
      if (sessions.length < SESSION_PAGE) return;
      const last = sessions[sessions.length - 1]!;
      afterT = last.started_at as number;
      afterId = last.id as string;
      await nextTick();
    }
  } catch (error) {
    throw mapSqliteError(error, ctx.path);
  } finally {
    // Also runs when the consumer stops early (`break` out of `for await`).
    release();
  }
}

/**
 * Every matching session with its messages, one session at a time, from one consistent snapshot.
 * Memory holds one session (its messages) at a time, whatever the number of sessions; use
 * `exportJsonl` to write sessions of any size in constant memory.
 */
export async function* exportStream(
  ctx: StoreContext,
  o?: ExportStreamOptions,
): AsyncGenerator<PortableSession, void, undefined> {
  const filter = exportFilter(o);
  let messages: PortableMessage[] = [];
  for await (const event of exportEvents(ctx, filter)) {
    if (event.kind === "session") messages = [];
    else if (event.kind === "messages") {
      for (const m of event.messages) messages.push(m);
    } else {
      yield { ...event.session, messages };
    }
  }
}
