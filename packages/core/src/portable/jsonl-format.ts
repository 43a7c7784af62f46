import { SCHEMA_VERSION, type SessionRow, type MessageRow as StoredMessageRow } from "@hermes/schema";
import type { MessageViewState } from "../read-model/message-view-fields.js";
import type { SessionViewFields } from "../read-model/session-view-fields.js";

/** The `format` name in the first line of a Hermes sessions JSONL file. */
export const JSONL_FORMAT = "hermes-sessions";

/**
 * The `state_meta` key where a store that holds newer agents' data (PostgreSQL) records the
 * newest `schema_version` imported or mirrored into it; its exports' headers name it.
 */
export const SOURCE_SCHEMA_META_KEY = "hermes_source_schema_version";

/** The newest JSONL format version this package writes and reads. */
export const JSONL_VERSION = 1;

/**
 * The newer agents' message fields a portable message carries when its source had them and
 * they hold a value (see {@link MESSAGE_VIEW_COLUMNS}). The uid lists stay JSON text, as stored.
 */
export interface PortableMessageFields {
  message_uid?: string;
  absorbed_message_uids?: string;
  tool_call_uids?: string;
  tool_call_uid?: string;
  view_state?: MessageViewState;
  compressed_summary?: boolean;
}

/** A message as the portable format carries it: every v11 column as stored, plus {@link PortableMessageFields}. */
export type PortableMessage = StoredMessageRow & PortableMessageFields;

/**
 * One session as the portable format carries it: every column of `sessions` under its database
 * name, plus `messages`, every column of `messages` as stored (JSON columns such as `tool_calls`
 * stay JSON text, so an export → import round trip is byte-exact, even for text that does not
 * parse). Messages are in one stable order, (`timestamp`, `id`), which import compares in too;
 * a newer agent's file gives every row, superseded ones included, each with its `view_state`.
 * The read model's session and message fields ({@link SESSION_VIEW_COLUMNS},
 * {@link MESSAGE_VIEW_COLUMNS}) follow the v11 columns, each only where it holds a value: a
 * key the source has no column for and a NULL are both absent.
 */
export type PortableSession = SessionRow & SessionViewFields & { messages: PortableMessage[] };

/**
 * The first line of a JSONL export.
 *
 * @example
 * {"format":"hermes-sessions","version":1,"schema_version":11,"exported_at":1767225600.5,"generator":"@hermes/store"}
 */
export interface JsonlHeader {
  format: typeof JSONL_FORMAT;
  version: number;
  /**
   * `schema_version` of the database the rows come from: 11 for our files, the agent's version
   * (30, 31, …) for a newer agent's file, and for a PostgreSQL store the newest version of the
   * data imported or mirrored into it.
   */
  schema_version: number;
  /** When the export started, Unix epoch seconds. */
  exported_at: number;
  generator: string;
  /** The filters of the export, when any were given. */
  filter?: { source?: string; session_ids?: string[]; since?: number };
}

type ColumnType = "text" | "integer" | "real" | "boolean" | "view_state";

interface ColumnSpec {
  readonly name: string;
  readonly type: ColumnType;
  /** `NOT NULL` without a default: the value must be present. */
  readonly required: boolean;
  /** The DDL default, used when the key is absent. */
  readonly fallback: number | null;
}

const col = (
  name: string,
  type: ColumnType,
  required = false,
  fallback: number | null = null,
): ColumnSpec => ({
  name,
  type,
  required,
  fallback,
});

/**
 * Columns of `sessions` in DDL order. Portable rows are always written in this order, so two
 * exports of the same data are byte-identical whatever column order an old, upgraded file has.
 */
export const SESSION_COLUMNS: readonly ColumnSpec[] = [
  col("id", "text", true),
  col("source", "text", true),
  col("user_id", "text"),
  col("model", "text"),
  col("model_config", "text"),
  col("system_prompt", "text"),
  col("parent_session_id", "text"),
  col("started_at", "real", true),
  col("ended_at", "real"),
  col("end_reason", "text"),
  col("message_count", "integer", false, 0),
  col("tool_call_count", "integer", false, 0),
  col("input_tokens", "integer", false, 0),
  col("output_tokens", "integer", false, 0),
  col("cache_read_tokens", "integer", false, 0),
  col("cache_write_tokens", "integer", false, 0),
  col("reasoning_tokens", "integer", false, 0),
  col("billing_provider", "text"),
  col("billing_base_url", "text"),
  col("billing_mode", "text"),
  col("estimated_cost_usd", "real"),
  col("actual_cost_usd", "real"),
  col("cost_status", "text"),
  col("cost_source", "text"),
  col("pricing_version", "text"),
  col("title", "text"),
  col("api_call_count", "integer", false, 0),
];

/** Columns of `messages` in DDL order (see {@link SESSION_COLUMNS}). */
export const MESSAGE_COLUMNS: readonly ColumnSpec[] = [
  col("id", "integer"),
  col("session_id", "text"),
  col("role", "text", true),
  col("content", "text"),
  col("tool_call_id", "text"),
  col("tool_calls", "text"),
  col("tool_name", "text"),
  col("timestamp", "real", true),
  col("token_count", "integer"),
  col("finish_reason", "text"),
  col("reasoning", "text"),
  col("reasoning_content", "text"),
  col("reasoning_details", "text"),
  col("codex_reasoning_items", "text"),
  col("codex_message_items", "text"),
];

/**
 * The read model's session fields ({@link SessionViewFields}), after {@link SESSION_COLUMNS}:
 * a key is written only when the source holds a value for it.
 */
export const SESSION_VIEW_COLUMNS: readonly ColumnSpec[] = [
  col("pinned", "boolean"),
  col("archived", "boolean"),
  col("auto_archived", "boolean"),
  col("hidden", "boolean"),
  col("created_source", "text"),
  col("last_read_at", "real"),
  col("rewind_count", "integer"),
];

/**
 * The read model's message fields ({@link PortableMessageFields}), after {@link MESSAGE_COLUMNS}:
 * a key is written only when the source holds a value for it.
 */
export const MESSAGE_VIEW_COLUMNS: readonly ColumnSpec[] = [
  col("message_uid", "text"),
  col("absorbed_message_uids", "text"),
  col("tool_call_uids", "text"),
  col("tool_call_uid", "text"),
  col("view_state", "view_state"),
  col("compressed_summary", "boolean"),
];

const VIEW_STATES: readonly string[] = ["active", "compacted", "superseded"];

/** Columns that hold JSON text: an object or array given in their place is encoded. */
const JSON_COLUMNS = new Set([
  "model_config",
  "tool_calls",
  "reasoning_details",
  "codex_reasoning_items",
  "codex_message_items",
  "absorbed_message_uids",
  "tool_call_uids",
]);

/**
 * The header line of an export made now.
 *
 * @param schemaVersion `schema_version` of the source (default: the v11 this store writes).
 */
export function jsonlHeader(
  exportedAt: number,
  filter?: JsonlHeader["filter"],
  schemaVersion: number = SCHEMA_VERSION,
): JsonlHeader {
  const header: JsonlHeader = {
    format: JSONL_FORMAT,
    version: JSONL_VERSION,
    schema_version: schemaVersion,
    exported_at: exportedAt,
    generator: "@hermes/store",
  };
  if (filter !== undefined && Object.keys(filter).length > 0) header.filter = filter;
  return header;
}

/** A read-model value in its portable form (flags as booleans, parsed JSON as text), or `null`. */
function portableViewValue(spec: ColumnSpec, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (spec.type === "boolean" && typeof value === "number") return value !== 0;
  if (JSON_COLUMNS.has(spec.name) && typeof value === "object") return JSON.stringify(value);
  return value;
}

/**
 * A row with exactly the given columns, in their order (missing columns become `null`), then the
 * view columns that hold a value.
 */
function canonical<T>(
  columns: readonly ColumnSpec[],
  viewColumns: readonly ColumnSpec[],
  row: Record<string, unknown>,
): T {
  const out: Record<string, unknown> = {};
  for (const c of columns) out[c.name] = row[c.name] ?? null;
  for (const c of viewColumns) {
    const value = portableViewValue(c, row[c.name]);
    if (value !== null) out[c.name] = value;
  }
  return out as T;
}

/** A stored `sessions` row in canonical column order, with its read-model fields. */
export function canonicalSession(row: Record<string, unknown>): SessionRow & SessionViewFields {
  return canonical<SessionRow & SessionViewFields>(SESSION_COLUMNS, SESSION_VIEW_COLUMNS, row);
}

/** A stored `messages` row in canonical column order, with its read-model fields. */
export function canonicalMessage(row: Record<string, unknown>): PortableMessage {
  return canonical<PortableMessage>(MESSAGE_COLUMNS, MESSAGE_VIEW_COLUMNS, row);
}

/** Why a value is not a valid portable session; `path` names the offending key. */
export class PortableValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PortableValidationError";
  }
}

function checkColumn(spec: ColumnSpec, value: unknown, where: string): unknown {
  if (value === undefined || value === null) {
    if (spec.required) throw new PortableValidationError(`${where}${spec.name} is required`);
    return spec.fallback;
  }
  if (JSON_COLUMNS.has(spec.name) && typeof value === "object") {
    // Rows from exportSession()/getMessages() carry parsed JSON; store it as compact JSON text.
    return JSON.stringify(value);
  }
  switch (spec.type) {
    case "text":
      if (typeof value !== "string") {
        throw new PortableValidationError(`${where}${spec.name} must be a string or null`);
      }
      if (spec.required && value.length === 0) {
        throw new PortableValidationError(`${where}${spec.name} must not be empty`);
      }
      return value;
    case "integer":
      if (typeof value !== "number" || !Number.isSafeInteger(value)) {
        throw new PortableValidationError(`${where}${spec.name} must be an integer or null`);
      }
      return value;
    case "real":
      if (typeof value !== "number" || !Number.isFinite(value)) {
        throw new PortableValidationError(`${where}${spec.name} must be a finite number or null`);
      }
      return value;
    case "boolean":
      if (typeof value !== "boolean") {
        throw new PortableValidationError(`${where}${spec.name} must be true, false or null`);
      }
      return value;
    case "view_state":
      if (typeof value !== "string" || !VIEW_STATES.includes(value)) {
        throw new PortableValidationError(`${where}${spec.name} must be one of ${VIEW_STATES.join(", ")}`);
      }
      return value;
  }
}

/** Copies the view columns `record` holds a value for onto `out`, checked. */
function checkViewColumns(
  columns: readonly ColumnSpec[],
  record: Record<string, unknown>,
  out: Record<string, unknown>,
  where: string,
): void {
  for (const spec of columns) {
    const value = checkColumn(spec, portableViewValue(spec, record[spec.name]), where);
    if (value !== null) out[spec.name] = value;
  }
}

/**
 * Checks one decoded session (a JSONL line or an item of an iterable) and returns it in
 * canonical form: every column present, in DDL order, JSON columns as text. Unknown keys (for
 * example `last_active` from `exportAll`, or columns of a newer schema) are ignored, so a newer
 * file still imports. Throws {@link PortableValidationError}.
 */
export function parsePortableSession(value: unknown): PortableSession {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new PortableValidationError("a session must be a JSON object");
  }
  const record = value as Record<string, unknown>;
  const session: Record<string, unknown> = {};
  for (const spec of SESSION_COLUMNS) session[spec.name] = checkColumn(spec, record[spec.name], "");
  checkViewColumns(SESSION_VIEW_COLUMNS, record, session, "");
  const id = session.id as string;
  if (session.parent_session_id === id) {
    throw new PortableValidationError("parent_session_id must not be the session's own id");
  }
  const rawMessages = record.messages ?? [];
  if (!Array.isArray(rawMessages)) throw new PortableValidationError("messages must be an array");
  const messages: PortableMessage[] = [];
  const seen = new Set<number>();
  for (let i = 0; i < rawMessages.length; i++) {
    const raw: unknown = rawMessages[i];
    const where = `messages[${i}].`;
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      throw new PortableValidationError(`messages[${i}] must be a JSON object`);
    }
    const m: Record<string, unknown> = {};
    for (const spec of MESSAGE_COLUMNS) {
      m[spec.name] = checkColumn(spec, (raw as Record<string, unknown>)[spec.name], where);
    }
    checkViewColumns(MESSAGE_VIEW_COLUMNS, raw as Record<string, unknown>, m, where);
    if (m.session_id === null) m.session_id = id;
    else if (m.session_id !== id) {
      throw new PortableValidationError(`${where}session_id must be the session's id (${id})`);
    }
    if (m.role === "") throw new PortableValidationError(`${where}role must not be empty`);
    if (m.id !== null) {
      if ((m.id as number) <= 0) throw new PortableValidationError(`${where}id must be a positive integer`);
      if (seen.has(m.id as number)) throw new PortableValidationError(`${where}id ${m.id} appears twice`);
      seen.add(m.id as number);
    }
    messages.push(m as unknown as PortableMessage);
  }
  return { ...(session as unknown as SessionRow), messages };
}

/**
 * Checks a decoded header line. Returns the version; throws {@link PortableValidationError}
 * for another format or a version newer than {@link JSONL_VERSION}.
 */
export function parseJsonlHeader(value: unknown): number {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new PortableValidationError(`the first line must be a header object with format "${JSONL_FORMAT}"`);
  }
  const h = value as Record<string, unknown>;
  if (h.format !== JSONL_FORMAT) {
    throw new PortableValidationError(
      `the first line must be a header with format "${JSONL_FORMAT}" (got ${JSON.stringify(h.format ?? null)})`,
    );
  }
  if (typeof h.version !== "number" || !Number.isInteger(h.version) || h.version < 1) {
    throw new PortableValidationError("the header's version must be a positive integer");
  }
  if (h.version > JSONL_VERSION) {
    throw new PortableValidationError(
      `format version ${h.version} is newer than this reader (${JSONL_VERSION}); upgrade @hermes/store`,
    );
  }
  return h.version;
}

/**
 * The JSONL line of a session (without the newline): `JSON.stringify` of the canonical row.
 * Messages are written one by one by the streaming writer; this gives the same bytes.
 */
export function sessionToJsonLine(session: PortableSession): string {
  const row = canonicalSession(session as unknown as Record<string, unknown>) as unknown as Record<
    string,
    unknown
  >;
  row.messages = session.messages.map((m) => canonicalMessage(m as unknown as Record<string, unknown>));
  return JSON.stringify(row);
}
