import { DECLARED_COLUMNS, readSchemaVersion, SCHEMA_VERSION, tableColumns } from "@hermes/schema";
import type { DatabaseConnection } from "./database-connection.js";

/**
 * What an opened file holds, read from its own catalogue (`sqlite_master`, `PRAGMA table_info`),
 * never guessed from its version number: newer Hermes Agents add columns and tables by
 * reconciliation on every open, so two files of one version can differ, and a version this
 * store has never seen may still hold the columns it knows.
 */
export interface FileProfile {
  /** `schema_version` of the file; `null` without a version row. */
  readonly schemaVersion: number | null;
  /** `schema_version` is above the one this store writes ({@link SCHEMA_VERSION}). */
  readonly newer: boolean;
  /** `wal`, or `rollback` (a rollback journal: `delete`, `truncate`, `persist`, …). */
  readonly journalMode: "wal" | "rollback";
  readonly sessionColumns: ReadonlySet<string>;
  readonly messageColumns: ReadonlySet<string>;
  /** Tables and views of the main schema. */
  readonly tables: ReadonlySet<string>;
  /** Column order of each full-text table present (`messages_fts`, `messages_fts_trigram`). */
  readonly ftsColumns: Readonly<Record<string, readonly string[]>>;
  /**
   * The file has exactly the reference's v11 columns and none of the newer agents' visibility,
   * prompt or listing columns: the store's own queries apply as written.
   */
  readonly plain: boolean;
  /** Newer agents' features the reads honour (see `file-views.ts`). */
  readonly features: FileFeatures;
}

/** Newer agents' conventions a file uses, each detected by its columns or tables. */
export interface FileFeatures {
  /** `messages.active` (and `compacted`): rewound and superseded rows are hidden. */
  readonly visibility: boolean;
  /** `messages.compacted`: summarized rows stay on display though not replayed. */
  readonly compacted: boolean;
  /** `messages.display_order`: display reads follow it and keep one row per value. */
  readonly displayOrder: boolean;
  /** `messages.display_metadata`: rows marked `model_only` are not displayed. */
  readonly displayMetadata: boolean;
  /** `system_prompts` + `sessions.system_prompt_hash`: deduplicated system prompts. */
  readonly systemPrompts: boolean;
  /** `sessions.archived` (or v31's `auto_archived`). */
  readonly archived: boolean;
  /** `sessions.hidden`. */
  readonly hidden: boolean;
}

/** The reference's v11 columns of `sessions` and `messages`, in declaration order. */
export const V11_SESSION_COLUMNS: readonly string[] = DECLARED_COLUMNS.sessions.map((c) => c.name);
export const V11_MESSAGE_COLUMNS: readonly string[] = DECLARED_COLUMNS.messages.map((c) => c.name);

const FTS_TABLES = ["messages_fts", "messages_fts_trigram"] as const;

function sameSet(actual: ReadonlySet<string>, expected: readonly string[]): boolean {
  return actual.size === expected.length && expected.every((c) => actual.has(c));
}

/**
 * Reads the profile of the file behind `conn` (a few catalogue reads, no write). Call it before
 * installing any `TEMP` view: `PRAGMA table_info` would describe the view instead.
 *
 * @param journalMode the file's journal mode when the caller knows it better than the
 *   connection (an in-memory image of a WAL file reports `memory`).
 */
export function readFileProfile(conn: DatabaseConnection, journalMode?: "wal" | "rollback"): FileProfile {
  const schemaVersion = readSchemaVersion(conn);
  const sessionColumns = tableColumns(conn, "sessions");
  const messageColumns = tableColumns(conn, "messages");
  const tables = new Set(
    conn
      .all<{ name: string }>("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
      .map((r) => r.name),
  );
  const ftsColumns: Record<string, readonly string[]> = {};
  for (const table of FTS_TABLES) {
    if (tables.has(table)) ftsColumns[table] = [...tableColumns(conn, table)];
  }
  const features: FileFeatures = {
    visibility: messageColumns.has("active"),
    compacted: messageColumns.has("active") && messageColumns.has("compacted"),
    displayOrder: messageColumns.has("display_order"),
    displayMetadata: messageColumns.has("display_metadata"),
    systemPrompts: tables.has("system_prompts") && sessionColumns.has("system_prompt_hash"),
    archived: sessionColumns.has("archived") || sessionColumns.has("auto_archived"),
    hidden: sessionColumns.has("hidden"),
  };
  const mode =
    journalMode ?? (String(conn.db.pragma("journal_mode", { simple: true })) === "wal" ? "wal" : "rollback");
  return {
    schemaVersion,
    newer: schemaVersion !== null && schemaVersion > SCHEMA_VERSION,
    journalMode: mode,
    sessionColumns,
    messageColumns,
    tables,
    ftsColumns,
    plain:
      sameSet(sessionColumns, V11_SESSION_COLUMNS) &&
      sameSet(messageColumns, V11_MESSAGE_COLUMNS) &&
      !Object.values(features).some(Boolean),
    features,
  };
}
