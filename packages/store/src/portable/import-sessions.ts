import {
  type ImportBackend,
  type ImportOutcome,
  type ImportReport,
  type ImportSessionsOptions,
  type ImportSource,
  MESSAGE_COLUMNS,
  type PendingImport,
  type PortableSession,
  runImport,
  SESSION_COLUMNS,
  type SessionRow,
} from "@hermes/core";
import type { MessageRow as StoredMessageRow } from "@hermes/schema";
import type { StoreContext } from "../store-context.js";
import { MESSAGE_COLUMN_SQL, SESSION_COLUMN_SQL } from "./column-sql.js";

const sessionPlaceholders = SESSION_COLUMNS.map((c) => `:${c.name}`).join(", ");
// Keep the message id unless another row already has it (importing into a non-empty file).
// A taken id is replaced by one above `:floor` (the largest id in the source, when known), so
// the new id cannot take the id of a message imported later and renumber it in turn.
const NEW_ID_SQL = `CASE WHEN :id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM messages WHERE id = :id) THEN :id
    WHEN :floor > (SELECT COALESCE(MAX(id), 0) FROM messages) THEN :floor + 1
    ELSE NULL END`;
const messagePlaceholders = MESSAGE_COLUMNS.map((c) => (c.name === "id" ? NEW_ID_SQL : `:${c.name}`)).join(
  ", ",
);

const INSERT_SESSION_SQL = `INSERT INTO sessions (${SESSION_COLUMN_SQL}) VALUES (${sessionPlaceholders})`;
const UPDATE_SESSION_SQL = `UPDATE sessions SET ${SESSION_COLUMNS.filter((c) => c.name !== "id")
  .map((c) => `"${c.name}" = :${c.name}`)
  .join(", ")} WHERE id = :id`;
const INSERT_MESSAGE_SQL = `INSERT INTO messages (${MESSAGE_COLUMN_SQL}) VALUES (${messagePlaceholders})`;
const SELECT_SESSION_SQL = `SELECT ${SESSION_COLUMN_SQL} FROM sessions WHERE id = ?`;
const SESSION_EXISTS_SQL = "SELECT 1 AS x FROM sessions WHERE id = ?";
const COUNT_MESSAGES_SQL = "SELECT COUNT(*) AS n FROM messages WHERE session_id = ?";
const SELECT_MESSAGES_SQL = `SELECT ${MESSAGE_COLUMN_SQL} FROM messages WHERE session_id = ? ORDER BY timestamp, id`;
const DELETE_MESSAGES_SQL = "DELETE FROM messages WHERE session_id = ?";

/** True when the stored session has exactly these columns and messages (message ids aside). */
function sameContent(ctx: StoreContext, stored: Record<string, unknown>, s: PortableSession): boolean {
  const incoming = s as unknown as Record<string, unknown>;
  for (const c of SESSION_COLUMNS) if (stored[c.name] !== incoming[c.name]) return false;
  const count = ctx.conn.get<{ n: number }>(COUNT_MESSAGES_SQL, [s.id])?.n ?? 0;
  if (count !== s.messages.length) return false;
  let i = 0;
  for (const row of ctx.conn.statement(SELECT_MESSAGES_SQL).iterate(s.id) as IterableIterator<
    Record<string, unknown>
  >) {
    const m = s.messages[i++] as unknown as Record<string, unknown>;
    for (const c of MESSAGE_COLUMNS) {
      // Ids are not content: one may have been renumbered because it was taken at import time.
      if (c.name !== "id" && row[c.name] !== m[c.name]) return false;
    }
  }
  return true;
}

function insertMessages(ctx: StoreContext, messages: readonly StoredMessageRow[], floor: number): void {
  const stmt = ctx.conn.statement(INSERT_MESSAGE_SQL);
  for (const m of messages) stmt.run({ ...m, floor });
}

/** Writes one session inside the caller's write unit. */
function writeSession(
  ctx: StoreContext,
  p: PendingImport,
  onConflict: "skip" | "replace",
  floor: number,
): ImportOutcome {
  const { messages, ...row } = p.session;
  const values: SessionRow = p.detach ? { ...row, parent_session_id: null } : row;
  const stored = ctx.conn.get<Record<string, unknown>>(SELECT_SESSION_SQL, [values.id]);
  if (stored === undefined) {
    ctx.conn.statement(INSERT_SESSION_SQL).run(values);
    insertMessages(ctx, messages, floor);
    return "imported";
  }
  if (sameContent(ctx, stored, { ...values, messages })) return "unchanged";
  if (onConflict === "skip") return "conflict";
  ctx.conn.run(DELETE_MESSAGES_SQL, [values.id]);
  ctx.conn.statement(UPDATE_SESSION_SQL).run(values);
  insertMessages(ctx, messages, floor);
  return "replaced";
}

/** Writes one unit of an import (sessions with their messages) as one write of the store's queue. */
export function writeImportBatch(
  ctx: StoreContext,
  batch: readonly PendingImport[],
  o: { onConflict: "skip" | "replace"; idFloor: number },
): Promise<ImportOutcome[]> {
  // Outcomes are collected inside the unit and applied after COMMIT: a unit retried after a
  // busy error runs again from the start and must not count twice.
  return ctx.writes.run("importSessions", () =>
    batch.map((p) => writeSession(ctx, p, o.onConflict, o.idFloor)),
  );
}

/**
 * Imports sessions with their messages into the SQLite store (see {@link runImport} for the
 * rules); each unit of sessions is one write of the store's queue, by `writeBatch` (default:
 * {@link writeImportBatch} on `ctx`; the writer thread's, when the store has one).
 */
export function importSessions(
  ctx: StoreContext,
  source: ImportSource,
  o?: ImportSessionsOptions,
  writeBatch: ImportBackend["writeBatch"] = (batch, opts) => writeImportBatch(ctx, batch, opts),
): Promise<ImportReport> {
  return runImport(
    { exists: (id) => ctx.conn.get(SESSION_EXISTS_SQL, [id]) !== undefined, writeBatch },
    source,
    o,
  );
}
