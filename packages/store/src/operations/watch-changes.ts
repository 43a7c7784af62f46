import { setTimeout as sleep } from "node:timers/promises";
import {
  InvalidArgumentError,
  nonNegativeInt,
  optionsObject as options,
  requireId,
  type StoreChange,
  StoreClosedError,
  toMessageRow,
  type WatchChangesOptions,
} from "@hermes/core";
import type { MessageRow as StoredMessageRow } from "@hermes/schema";
import { MESSAGE_COLUMN_SQL } from "../portable/column-sql.js";
import type { StoreContext } from "../store-context.js";

const DATA_VERSION_SQL = "PRAGMA data_version";
const LAST_MESSAGE_SQL = "SELECT COALESCE(MAX(id), 0) AS id FROM messages";
// The file's own table (`main.`): a store reading a newer agent's file reads `sessions` through
// a temp view of the same name (file-views.ts), which has no rowid.
const LAST_SESSION_SQL = "SELECT COALESCE(MAX(rowid), 0) AS r FROM main.sessions";
// Every query is a range of the rowid (messages.id is the INTEGER PRIMARY KEY): it reads only
// the rows written since the cursor, however large the table.
const NEW_SESSIONS_SQL = "SELECT rowid AS r, id FROM main.sessions WHERE rowid > ? ORDER BY rowid";
const UPDATED_SQL = `SELECT session_id, MIN(id) AS first_id, MAX(id) AS last_id FROM messages
  WHERE id > ? AND id <= ? GROUP BY session_id ORDER BY first_id`;
const UPDATED_ONE_SQL = "SELECT MAX(id) AS last_id FROM messages WHERE id > ? AND id <= ? AND session_id = ?";
const MESSAGES_SQL = `SELECT ${MESSAGE_COLUMN_SQL} FROM messages WHERE id > ? ORDER BY id LIMIT ?`;
const MESSAGES_ONE_SQL = `SELECT ${MESSAGE_COLUMN_SQL} FROM messages
  WHERE id > ? AND session_id = ? ORDER BY id LIMIT ?`;

/** Checks the options of `watchChanges`. */
export function watchChangesArguments(o: WatchChangesOptions | undefined) {
  const opts = options("options", o);
  const intervalMs = nonNegativeInt("intervalMs", opts.intervalMs, 250, 3_600_000);
  if (intervalMs < 10) throw new InvalidArgumentError("intervalMs", "intervalMs must be at least 10");
  const batchSize = nonNegativeInt("batchSize", opts.batchSize, 500, 10_000);
  if (batchSize === 0) throw new InvalidArgumentError("batchSize", "batchSize must be at least 1");
  const afterMessageId =
    opts.afterMessageId === undefined ? undefined : nonNegativeInt("afterMessageId", opts.afterMessageId, 0);
  const sessionId = opts.sessionId === undefined ? undefined : requireId("sessionId", opts.sessionId);
  const signal = opts.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidArgumentError("signal", "signal must be an AbortSignal");
  }
  return {
    intervalMs,
    batchSize,
    afterMessageId,
    sessionId,
    signal,
    includeMessages: opts.includeMessages === true,
  };
}

/**
 * A feed of what other connections (another process, the agent) and this store write: every
 * `intervalMs` it asks SQLite whether the file changed (`PRAGMA data_version`, which moves when
 * another connection commits, plus this store's own commit count) and only then reads the rows
 * added since its cursor (`messages.id > last`, a rowid range: cheap on a million rows).
 *
 * A change is yielded for every check that saw a commit; one with no new sessions or messages
 * means something else changed (a title, an end, a deletion, another session when filtering by
 * `sessionId`): re-read what you show. The feed ends when `signal` aborts; closing the store
 * under it ends it with `STORE_CLOSED`. Sessions are "new" when created after the feed started.
 */
export function watchChanges(
  ctx: StoreContext,
  isClosed: () => boolean,
  o?: WatchChangesOptions,
): AsyncIterable<StoreChange> {
  const a = watchChangesArguments(o);
  // Another connection's commits move data_version; this store's own commits do not, so its
  // count of committed transactions is part of the signature. A read-only store reading a
  // snapshot of the file reads it again first when the file changed (a new connection then
  // reports another data_version: one extra check, nothing missed).
  const version = () => {
    ctx.readOnly?.refresh();
    // A snapshot read again is a new connection with a data_version of its own: count it too.
    const generation = ctx.readOnly?.generation ?? 0;
    return `${generation}:${ctx.conn.get<{ data_version: number }>(DATA_VERSION_SQL)!.data_version}:${ctx.writes.stats.groupsCommitted}`;
  };
  return (async function* () {
    const aborted = () => a.signal?.aborted === true;
    if (aborted()) return;
    if (isClosed()) throw new StoreClosedError();
    // Read before the cursors: a commit in between is then seen as a change, never lost.
    let seen = version();
    let cursor = a.afterMessageId ?? ctx.conn.get<{ id: number }>(LAST_MESSAGE_SQL)!.id;
    let sessionCursor = ctx.conn.get<{ r: number }>(LAST_SESSION_SQL)!.r;
    // A resumed feed reports what was written after its cursor at once.
    let pending = a.afterMessageId !== undefined;
    while (!aborted()) {
      if (isClosed()) throw new StoreClosedError();
      const now = version();
      if (now !== seen) pending = true;
      seen = now;
      if (pending) {
        pending = false;
        const change: StoreChange = {
          newSessionIds: [],
          updatedSessionIds: [],
          afterMessageId: cursor,
          lastMessageId: cursor,
        };
        if (a.sessionId === undefined) {
          const rows = ctx.conn.all<{ r: number; id: string }>(NEW_SESSIONS_SQL, [sessionCursor]);
          change.newSessionIds = rows.map((r) => r.id);
          const last = ctx.conn.get<{ r: number }>(LAST_SESSION_SQL)!.r;
          // Deleting the last sessions lowers the highest rowid, which SQLite then reuses.
          sessionCursor = rows.length > 0 ? rows[rows.length - 1]!.r : Math.min(sessionCursor, last);
        }
        if (a.includeMessages) {
          const rows =
            a.sessionId === undefined
              ? ctx.conn.all<StoredMessageRow>(MESSAGES_SQL, [cursor, a.batchSize])
              : ctx.conn.all<StoredMessageRow>(MESSAGES_ONE_SQL, [cursor, a.sessionId, a.batchSize]);
          change.messages = rows.map(toMessageRow);
          const ids = new Set<string>();
          for (const m of rows) ids.add(m.session_id);
          change.updatedSessionIds = [...ids];
          if (rows.length > 0) change.lastMessageId = rows[rows.length - 1]!.id;
          // A full batch: more may be waiting, read on the next tick whatever data_version says.
          if (rows.length === a.batchSize) pending = true;
        } else {
          const last = ctx.conn.get<{ id: number }>(LAST_MESSAGE_SQL)!.id;
          if (a.sessionId === undefined) {
            const rows = ctx.conn.all<{ session_id: string }>(UPDATED_SQL, [cursor, last]);
            change.updatedSessionIds = rows.map((r) => r.session_id);
          } else {
            const row = ctx.conn.get<{ last_id: number | null }>(UPDATED_ONE_SQL, [
              cursor,
              last,
              a.sessionId,
            ]);
            if (row?.last_id != null) change.updatedSessionIds = [a.sessionId];
          }
          change.lastMessageId = Math.max(cursor, last);
        }
        cursor = change.lastMessageId;
        yield change;
        continue;
      }
      try {
        await sleep(a.intervalMs, undefined, a.signal === undefined ? {} : { signal: a.signal });
      } catch {
        return; // aborted while waiting
      }
    }
  })();
}
