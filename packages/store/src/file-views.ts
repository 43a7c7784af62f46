import { MESSAGE_VIEW_KEYS, REPLAY_COLUMNS, SESSION_VIEW_KEYS } from "@hermes/core";
import type { DatabaseConnection } from "./database-connection.js";
import { type FileProfile, V11_MESSAGE_COLUMNS, V11_SESSION_COLUMNS } from "./file-profile.js";

/**
 * How the store reads a file whose layout is not the reference's v11 (a newer Hermes Agent's,
 * or one it has never seen), with the agent's own visibility rules.
 *
 * Most reads need no change of their own: `TEMP` views named `sessions` and `messages` shadow
 * the tables for this connection only (SQLite looks an unqualified name up in `temp` first),
 * with the v11 columns (one the file lacks reads as NULL), then the read model's fields the file
 * has columns for (`SessionViewFields`/`MessageViewFields` of `@hermes/core`: flags,
 * `created_source`, uids, `view_state`, `compressed_summary`; a field without a column is not in
 * the view, so its key is absent), and the agent's display rules:
 *
 * - `sessions.system_prompt` is `COALESCE(system_prompts.prompt, sessions.system_prompt)`
 *   (newer agents store a prompt once, by hash, and clear the inline column);
 * - `messages` holds the rows the agent displays: `active = 1 OR compacted = 1`, without rows
 *   whose `display_metadata.model_only` is truthy. Rewound turns and superseded originals of
 *   a compaction's carried tail are gone from every read that goes through it (search hits and
 *   their context, previews, last activity, exports).
 *
 * The views live in the connection's `temp` schema (in memory: `temp_store = MEMORY`), never in
 * the file; the file's own views and triggers keep reading its tables (SQLite binds them to
 * their schema). Reads that differ in more than visibility have their own SQL here: display
 * order and de-duplication, the replay of a conversation (`active = 1` only, by id), and
 * counts as the agent keeps them.
 */
export interface ProfileReads {
  /** Every displayed message of `:session_id`, v11 columns, in the agent's display order. */
  readonly displayMessagesSql: string;
  /**
   * A page of displayed messages after display key `:after_key`, at most `:limit`, with the
   * key in `_display_key`; `null` when the file orders display by (timestamp, id) (then the
   * store's own keyset pagination applies through the views).
   */
  readonly displayPageSql: string | null;
  /** The display key of message `?` (id) in session `?`; `null` with `displayPageSql`. */
  readonly displayKeySql: string | null;
  /** Replay columns of `:session_id`'s active rows, by id. */
  readonly replaySql: string;
  /** Replay columns of the active rows of the sessions in JSON array `:session_ids`, by id. */
  readonly lineageReplaySql: string;
  /** Newest active rows before id `:before_id`, at most `:limit` (conversation window columns). */
  readonly windowTailSql: string;
  /** Active rows of session `?`. */
  readonly windowCountSql: string;
  /** Rows counted by `messageCount` (active rows, as the agent's counters): all, or of `?`. */
  readonly countAllSql: string;
  readonly countSessionSql: string;
  /**
   * Every row of session `:session_id` (superseded ones too) after (`:after_t`, `:after_id`), at
   * most `:limit`, v11 columns and the read model's, in (timestamp, id) order: what an export
   * carries.
   */
  readonly auditPageSql: string;
  /** Whether listings and searches can leave out archived or hidden sessions (the file has the flags). */
  readonly sessionFlags: boolean;
  /** `id, message_uid` of the rows whose ids are in JSON array `?`; `null` without the column. */
  readonly messageUidsSql: string | null;
  /** `schema_version` of the file (an export's header names it); `null` without one. */
  readonly schemaVersion: number | null;
}

/** Name of the temp view of session flags that listings filter on. */
export const SESSION_FLAGS_VIEW = "hermes_session_flags";

/**
 * Temp views of the sessions a search leaves out (their ids), by what the caller brings back:
 * by default those flagged hidden or archived, as the listings; with `includeArchived` the
 * hidden ones; with `includeHidden` the archived ones.
 */
const LEFT_OUT_VIEWS = {
  flagged: { name: "hermes_sessions_unlisted", where: "hidden != 0 OR archived != 0" },
  hidden: { name: "hermes_sessions_hidden", where: "hidden != 0" },
  archived: { name: "hermes_sessions_archived", where: "archived != 0" },
} as const;

/**
 * The view of sessions a search must leave out, or `undefined` when none (a file without the
 * flags, or both flags brought back).
 */
export function excludedSessionsView(
  reads: ProfileReads | null | undefined,
  o: { includeArchived: boolean; includeHidden: boolean },
): string | undefined {
  if (!reads?.sessionFlags || (o.includeArchived && o.includeHidden)) return undefined;
  if (o.includeArchived) return LEFT_OUT_VIEWS.hidden.name;
  if (o.includeHidden) return LEFT_OUT_VIEWS.archived.name;
  return LEFT_OUT_VIEWS.flagged.name;
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** `alias."col"`, or `NULL AS "col"` when the file has no such column. */
function columnOf(alias: string, columns: ReadonlySet<string>, name: string): string {
  return columns.has(name) ? `${alias}.${q(name)}` : `NULL AS ${q(name)}`;
}

function selectList(alias: string, columns: ReadonlySet<string>, names: readonly string[]): string {
  return names.map((n) => columnOf(alias, columns, n)).join(", ");
}

/** The read model's session fields the file has columns for, as select items of `s`. */
function sessionViewList(columns: ReadonlySet<string>): string[] {
  return SESSION_VIEW_KEYS.filter((k) => columns.has(k)).map((k) => `s.${q(k)}`);
}

/** `view_state` of `m` from `active` and `compacted`, as a select item; `null` without `active`. */
export function viewStateItem(columns: ReadonlySet<string>): string | null {
  if (!columns.has("active")) return null;
  const compacted = columns.has("compacted") ? "m.compacted = 1" : "0";
  return `CASE WHEN m.active = 1 THEN 'active' WHEN ${compacted} THEN 'compacted' ELSE 'superseded' END AS "view_state"`;
}

/**
 * The read model's message fields the file has columns for, as select items of `m`: the uid
 * columns as stored (JSON text, parsed by `toMessageRow`), `view_state` from `active` and
 * `compacted`, `compressed_summary` from `_compressed_summary`.
 */
function messageViewList(columns: ReadonlySet<string>): string[] {
  const items: string[] = [];
  for (const key of MESSAGE_VIEW_KEYS) {
    if (key === "view_state") {
      const item = viewStateItem(columns);
      if (item !== null) items.push(item);
    } else if (key === "compressed_summary") {
      if (columns.has("_compressed_summary")) items.push(`m."_compressed_summary" AS "compressed_summary"`);
    } else if (columns.has(key)) items.push(`m.${q(key)}`);
  }
  return items;
}

/** The v11 columns of `messages` (NULL where missing), then the read model's fields, as select items of `m`. */
export function messageList(columns: ReadonlySet<string>): string {
  return [selectList("m", columns, V11_MESSAGE_COLUMNS), ...messageViewList(columns)].join(", ");
}

/**
 * Python truthiness of `m.display_metadata`'s `model_only` member (a JSON object's): true, a
 * non-zero number, a non-empty string, array or object. Invalid JSON hides nothing.
 */
export const MODEL_ONLY = `(m.display_metadata IS NOT NULL AND json_valid(m.display_metadata) AND CASE json_type(m.display_metadata, '$.model_only')
    WHEN 'true' THEN 1
    WHEN 'integer' THEN json_extract(m.display_metadata, '$.model_only') != 0
    WHEN 'real' THEN json_extract(m.display_metadata, '$.model_only') != 0
    WHEN 'text' THEN json_extract(m.display_metadata, '$.model_only') != ''
    WHEN 'array' THEN json_array_length(m.display_metadata, '$.model_only') > 0
    WHEN 'object' THEN json_extract(m.display_metadata, '$.model_only') != '{}'
    ELSE 0 END)`;

/** The conditions on `m` (an alias of `main.messages`) of the agent's displayed rows. */
function displayedWhere(profile: FileProfile): string {
  const f = profile.features;
  const parts: string[] = [];
  if (f.compacted) parts.push("(m.active = 1 OR m.compacted = 1)");
  else if (f.visibility) parts.push("m.active = 1");
  if (f.displayMetadata) parts.push(`NOT ${MODEL_ONLY}`);
  return parts.length === 0 ? "1" : parts.join(" AND ");
}

/** The condition on `m` of the rows a model is given back (replay, counters). */
function activeWhere(profile: FileProfile): string {
  return profile.features.visibility ? "m.active = 1" : "1";
}

// The columns a conversation window reads: the replay's, with what it pages and budgets by.
const WINDOW = ["id", "timestamp", "token_count", ...REPLAY_COLUMNS] as const;

/** The `CREATE TEMP VIEW` statements for a profile (none for a plain v11 file). */
export function fileViewStatements(profile: FileProfile): string[] {
  if (profile.plain) return [];
  const s = profile.sessionColumns;
  const m = profile.messageColumns;
  const sessionList = V11_SESSION_COLUMNS.map((name) => {
    if (name === "system_prompt" && profile.features.systemPrompts) {
      const inline = s.has("system_prompt") ? "s.system_prompt" : "NULL";
      return `COALESCE((SELECT p.prompt FROM main.system_prompts p WHERE p.hash = s.system_prompt_hash), ${inline}) AS "system_prompt"`;
    }
    return columnOf("s", s, name);
  })
    .concat(sessionViewList(s))
    .join(", ");
  const flag = (name: string) => (s.has(name) ? `COALESCE(s.${q(name)}, 0)` : "0");
  // Archived by the user or by the agent's stale sweep (v31's `auto_archived`).
  const archived = s.has("auto_archived")
    ? `(${flag("archived")} != 0 OR ${flag("auto_archived")} != 0)`
    : flag("archived");
  return [
    `CREATE TEMP VIEW IF NOT EXISTS sessions AS SELECT ${sessionList} FROM main.sessions s`,
    `CREATE TEMP VIEW IF NOT EXISTS messages AS SELECT ${messageList(m)} FROM main.messages m WHERE ${displayedWhere(profile)}`,
    `CREATE TEMP VIEW IF NOT EXISTS ${SESSION_FLAGS_VIEW} AS SELECT s.id AS id, ${archived} AS archived, ${flag("hidden")} AS hidden FROM main.sessions s`,
    ...Object.values(LEFT_OUT_VIEWS).map(
      (v) =>
        `CREATE TEMP VIEW IF NOT EXISTS ${v.name} AS SELECT id FROM ${SESSION_FLAGS_VIEW} WHERE ${v.where}`,
    ),
  ];
}

/**
 * Installs the views of {@link fileViewStatements} on a connection (read-only connections may
 * create `temp` objects: they are not in the file). Temp storage is kept in memory, so neither
 * the views nor a large sort ever create a temporary file, unless `tempFiles` (SQLite's default:
 * sorts may spill to a file in the system's temp folder, which ranked FTS5 queries run 12–27 %
 * faster with; docs/design/read-pool.md).
 */
export function installFileViews(conn: DatabaseConnection, profile: FileProfile, tempFiles = false): void {
  // Before any temp object: changing temp_store drops the connection's temp views.
  if (!tempFiles) conn.db.pragma("temp_store = MEMORY");
  for (const sql of fileViewStatements(profile)) conn.exec(sql);
}

/** The SQL of reads that differ for `profile`; `null` for a plain v11 file. */
export function profileReads(profile: FileProfile): ProfileReads | null {
  if (profile.plain) return null;
  const m = profile.messageColumns;
  const columns = messageList(m);
  const displayed = displayedWhere(profile);
  const active = activeWhere(profile);
  const byDisplay = profile.features.displayOrder;
  // One row per display_order: the active one, else the newest (the agent's display pages).
  const winner = byDisplay
    ? ` AND NOT EXISTS (SELECT 1 FROM main.messages p WHERE p.session_id = m.session_id
        AND p.display_order = m.display_order AND ${displayed.replace(/\bm\./g, "p.")}
        AND (p.active > m.active OR (p.active = m.active AND p.id > m.id)))`
    : "";
  const key = byDisplay ? "COALESCE(m.display_order, m.id)" : null;
  const replay = selectList("m", m, REPLAY_COLUMNS);
  return {
    displayMessagesSql: `SELECT ${columns} FROM main.messages m WHERE m.session_id = :session_id AND ${displayed}${winner}
      ORDER BY ${key === null ? "m.timestamp, m.id" : `${key}, m.id`}`,
    displayPageSql:
      key === null
        ? null
        : `SELECT ${columns}, ${key} AS _display_key FROM main.messages m
      WHERE m.session_id = :session_id AND ${key} > :after_key AND ${displayed}${winner}
      ORDER BY ${key}, m.id LIMIT :limit`,
    displayKeySql:
      key === null ? null : `SELECT ${key} AS k FROM main.messages m WHERE m.id = ? AND m.session_id = ?`,
    replaySql: `SELECT ${replay} FROM main.messages m WHERE m.session_id = :session_id AND ${active} ORDER BY m.id`,
    lineageReplaySql: `SELECT ${replay} FROM main.messages m
      WHERE m.session_id IN (SELECT value FROM json_each(:session_ids)) AND ${active} ORDER BY m.id`,
    windowTailSql: `SELECT ${selectList("m", m, WINDOW)} FROM main.messages m
      WHERE m.session_id = :session_id AND m.id < :before_id AND ${active} ORDER BY m.id DESC LIMIT :limit`,
    windowCountSql: `SELECT COUNT(*) AS n FROM main.messages m WHERE m.session_id = ? AND ${active}`,
    countAllSql: `SELECT COUNT(*) AS n FROM main.messages m WHERE ${active}`,
    countSessionSql: `SELECT COUNT(*) AS n FROM main.messages m WHERE m.session_id = ? AND ${active}`,
    auditPageSql: `SELECT ${columns} FROM main.messages m WHERE m.session_id = :session_id
      AND m.timestamp >= :after_t AND (m.timestamp > :after_t OR m.id > :after_id)
      ORDER BY m.timestamp, m.id LIMIT :limit`,
    sessionFlags: profile.features.archived || profile.features.hidden,
    messageUidsSql: m.has("message_uid")
      ? "SELECT m.id AS id, m.message_uid AS message_uid FROM main.messages m WHERE m.id IN (SELECT value FROM json_each(?))"
      : null,
    schemaVersion: profile.schemaVersion,
  };
}
