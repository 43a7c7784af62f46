// The SQL change capture reads a file with, for its layout: whole rows of new messages, and the
// "light" state of every row of a session (what can change after a row is written).
import { createHash } from "node:crypto";
import type { CapturedMessage, CapturedMessageState } from "@hermes/core";
import { toMessageRow } from "@hermes/core";
import type { MessageRow as StoredMessageRow } from "@hermes/schema";
import type { DatabaseConnection } from "../database-connection.js";
import type { FileProfile } from "../file-profile.js";
import { MODEL_ONLY, messageList, viewStateItem } from "../file-views.js";

/** A light row as read: its state, and the timestamp that ties it to the row a consumer holds. */
export type LightRow = CapturedMessageState & { timestamp: number };

/** Prepared reads of one file layout. */
export interface CaptureReads {
  /**
   * The signature of every session: its whole row (through the read model's view on a newer
   * agent's file) as one text built by SQLite, so a pass creates no row objects.
   */
  allSessionSigs(): Array<{ id: string; sig: string }>;
  /** One session's whole row and its signature. */
  session(id: string): { row: Record<string, unknown> & { id: string }; sig: string } | undefined;
  /** Sessions with messages above `afterId`, and their highest id. */
  sessionsWithNewMessages(afterId: number): Map<string, number>;
  maxMessageId(): number;
  light(sessionId: string): LightRow[];
  /** Whole rows of `sessionId` above `afterId`, by id. */
  newMessages(sessionId: string, afterId: number): CapturedMessage[];
}

/** The extra columns of a captured message, as select items of `m`. */
function extras(profile: FileProfile): string[] {
  const items: string[] = [];
  if (profile.messageColumns.has("display_order")) items.push("m.display_order AS display_order");
  if (profile.features.displayMetadata) items.push(`${MODEL_ONLY} AS model_only`);
  return items;
}

/** The reads of `conn`'s file, whose layout is `profile`. */
export function captureReads(conn: DatabaseConnection, profile: FileProfile): CaptureReads {
  const extra = extras(profile);
  const state = viewStateItem(profile.messageColumns);
  const lightList = ["m.id AS id", "m.timestamp AS timestamp", ...(state === null ? [] : [state]), ...extra];
  const fullList = [messageList(profile.messageColumns), ...extra].join(", ");
  const hasModelOnly = profile.features.displayMetadata;
  const lightSql = `SELECT ${lightList.join(", ")} FROM main.messages m WHERE m.session_id = ? ORDER BY m.id`;
  const fullSql = `SELECT ${fullList} FROM main.messages m WHERE m.session_id = ? AND m.id > ? ORDER BY m.id`;
  // `sessions` is the temp view of the read model on a newer agent's file, the table otherwise.
  const sessionColumns = conn.db.prepare("SELECT * FROM sessions LIMIT 0").columns();
  // One JSON array per row, built in C (faster than quote() and concatenation); a BLOB, which
  // JSON cannot hold, becomes an object of its hex, which no text or number value can equal.
  const sig = `json_array(${sessionColumns
    .map((c) => {
      const q = `"${c.name.replace(/"/g, '""')}"`;
      return `iif(typeof(${q}) = 'blob', json_object('blob', hex(${q})), ${q})`;
    })
    .join(", ")})`;
  return {
    allSessionSigs: () => conn.all(`SELECT id, ${sig} AS sig FROM sessions`),
    session(id) {
      const row = conn.get<Record<string, unknown> & { id: string; _sig: string }>(
        `SELECT *, ${sig} AS _sig FROM sessions WHERE id = ?`,
        [id],
      );
      if (row === undefined) return undefined;
      const { _sig, ...rest } = row;
      return { row: rest as Record<string, unknown> & { id: string }, sig: _sig };
    },
    sessionsWithNewMessages(afterId) {
      const rows = conn.all<{ session_id: string; mx: number }>(
        "SELECT session_id, MAX(id) AS mx FROM main.messages WHERE id > ? GROUP BY session_id",
        [afterId],
      );
      return new Map(rows.map((r) => [r.session_id, r.mx]));
    },
    maxMessageId: () => conn.get<{ mx: number | null }>("SELECT MAX(id) AS mx FROM main.messages")?.mx ?? 0,
    light(sessionId) {
      const rows = conn.all<LightRow>(lightSql, [sessionId]);
      if (hasModelOnly) for (const r of rows) r.model_only = Number(r.model_only) === 1;
      return rows;
    },
    newMessages(sessionId, afterId) {
      const rows = conn.all<StoredMessageRow & { model_only?: unknown }>(fullSql, [sessionId, afterId]);
      return rows.map((r) => {
        const m = toMessageRow(r) as CapturedMessage;
        if (hasModelOnly) m.model_only = Number(r.model_only) === 1;
        return m;
      });
    },
  };
}

/** Hash of the light rows with an id up to `maxId` (all of them by default), in id order. */
export function lightHash(rows: readonly LightRow[], maxId = Number.POSITIVE_INFINITY): string {
  const h = createHash("sha1");
  for (const r of rows) {
    if (r.id > maxId) break;
    h.update(`${r.id}|${r.timestamp}|${r.view_state ?? ""}|${r.display_order ?? ""}|${r.model_only ?? ""}\n`);
  }
  return h.digest("base64url").slice(0, 12);
}

/** The state a consumer keeps of a light row (without the timestamp, which never changes). */
export function stateOf(r: LightRow): CapturedMessageState {
  const s: CapturedMessageState = { id: r.id };
  if (r.view_state !== undefined) s.view_state = r.view_state;
  if (r.display_order !== undefined) s.display_order = r.display_order;
  if (r.model_only !== undefined) s.model_only = r.model_only;
  return s;
}
