// The agent's per-message identity and visibility, as every read of a newer agent's file returns them.

/**
 * Where a row stands in the agent's view of its conversation:
 * - `active`: the current row (`active = 1`), replayed to the model and displayed;
 * - `compacted`: summarized by a compaction (`active = 0, compacted = 1`), still displayed;
 * - `superseded`: rewound, or an original a compaction copied (`active = 0, compacted = 0`):
 *   neither replayed nor displayed; only audit reads and exports carry such rows.
 */
export type MessageViewState = "active" | "compacted" | "superseded";

/**
 * The newer agents' message columns of the read model (schema v30/v31). A key is absent where
 * the file has no such column (a v11 file has none of them; a v30 file has no uid columns) and
 * `null` where the column holds NULL; nothing is guessed.
 */
export interface MessageViewFields {
  /** Identity of the logical message (v31): copies share it; `null` = no identity yet. */
  message_uid?: string | null;
  /** Uids a merged message absorbed, in text order (v31); a malformed value reads as `null`. */
  absorbed_message_uids?: string[] | null;
  /** One uid per tool call id of an assistant row (v31): a string, or one per occurrence after a fold. */
  tool_call_uids?: Record<string, string | string[]> | null;
  /** Uid of the call a tool result answers (v31); `null` = unpaired. */
  tool_call_uid?: string | null;
  /** The row's state in the agent's view (files with `messages.active`). */
  view_state?: MessageViewState;
  /** The row is a compaction summary (files with `messages._compressed_summary`). */
  compressed_summary?: boolean;
}

/** The keys of {@link MessageViewFields}, in the order reads and exports carry them. */
export const MESSAGE_VIEW_KEYS = [
  "message_uid",
  "absorbed_message_uids",
  "tool_call_uids",
  "tool_call_uid",
  "view_state",
  "compressed_summary",
] as const satisfies ReadonlyArray<keyof MessageViewFields>;

/** The view state of a row from its `active` and `compacted` columns (`compacted` absent: 0). */
export function messageViewState(active: unknown, compacted: unknown): MessageViewState {
  if (Number(active) === 1) return "active";
  return Number(compacted) === 1 ? "compacted" : "superseded";
}

function parseJson(text: unknown): unknown {
  if (typeof text !== "string") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const nonEmptyString = (v: unknown): v is string => typeof v === "string" && v.length > 0;

/**
 * `absorbed_message_uids` as stored (a JSON array of non-empty strings); anything else,
 * malformed text included, is `null` (the agent ignores such a value).
 */
export function parseAbsorbedMessageUids(text: unknown): string[] | null {
  const value = parseJson(text);
  return Array.isArray(value) && value.every(nonEmptyString) ? value : null;
}

/**
 * `tool_call_uids` as stored (a JSON object of non-empty keys whose values are a uid or an array
 * of uids); anything else is `null`.
 */
export function parseToolCallUids(text: unknown): Record<string, string | string[]> | null {
  const value = parseJson(text);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  for (const [key, v] of Object.entries(value)) {
    if (key === "") return null;
    if (!nonEmptyString(v) && !(Array.isArray(v) && v.every(nonEmptyString))) return null;
  }
  return value as Record<string, string | string[]>;
}

/**
 * Converts, in place, the view columns of a row fresh from a driver (JSON text, 0/1) to the read
 * model: the uid arrays and maps parsed, `compressed_summary` a boolean. Keys that are absent
 * stay absent.
 */
export function toMessageViewFields(row: Record<string, unknown>): void {
  if ("absorbed_message_uids" in row) {
    row.absorbed_message_uids = parseAbsorbedMessageUids(row.absorbed_message_uids);
  }
  if ("tool_call_uids" in row) row.tool_call_uids = parseToolCallUids(row.tool_call_uids);
  if ("compressed_summary" in row && typeof row.compressed_summary !== "boolean") {
    row.compressed_summary = Number(row.compressed_summary) === 1;
  }
}
