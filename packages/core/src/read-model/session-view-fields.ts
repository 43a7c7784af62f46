// The agent's per-session visibility and provenance, as every read of a newer agent's file returns them.

/**
 * The newer agents' session columns of the read model (schema v30/v31). A key is absent where
 * the file has no such column (v11: all; v30: `auto_archived`) and `null` where the column holds
 * NULL. Default listings leave out sessions that are archived, auto-archived or hidden.
 */
export interface SessionViewFields {
  /** Pinned by the user: the agent never prunes it. */
  pinned?: boolean | null;
  /** Archived by the user (or by the stale sweep, see `auto_archived`). */
  archived?: boolean | null;
  /** Archived by the agent's automatic stale sweep (v31), not by the user. */
  auto_archived?: boolean | null;
  /** Hidden from listings. */
  hidden?: boolean | null;
  /** Source at creation (`source` may change later); `null` = unknown, fall back to `source`. */
  created_source?: string | null;
  /** When the user last read the session (Unix epoch seconds). */
  last_read_at?: number | null;
  /** How many times a turn was rewound (its rows are superseded). */
  rewind_count?: number | null;
}

/** The boolean flags of {@link SessionViewFields}. */
export const SESSION_FLAG_KEYS = [
  "pinned",
  "archived",
  "auto_archived",
  "hidden",
] as const satisfies ReadonlyArray<keyof SessionViewFields>;

/** The keys of {@link SessionViewFields}, in the order reads and exports carry them. */
export const SESSION_VIEW_KEYS = [
  ...SESSION_FLAG_KEYS,
  "created_source",
  "last_read_at",
  "rewind_count",
] as const satisfies ReadonlyArray<keyof SessionViewFields>;

/** A stored flag (0/1, or NULL) as the read model's `boolean | null`. */
export function flagValue(value: unknown): boolean | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "boolean") return value;
  return Number(value) !== 0;
}

/**
 * Converts, in place, the flag columns of a session row fresh from a driver (0/1) to booleans.
 * Keys that are absent stay absent. Returns the row.
 */
export function toSessionViewFields<T extends object>(row: T): T {
  const r = row as Record<string, unknown>;
  for (const key of SESSION_FLAG_KEYS) if (key in r) r[key] = flagValue(r[key]);
  return row;
}

/**
 * Whether a session is left out of default listings: archived (by the user or the sweep) or
 * hidden. Absent or `null` flags count as not set.
 */
export function isUnlisted(row: SessionViewFields): boolean {
  return row.archived === true || row.auto_archived === true || row.hidden === true;
}
