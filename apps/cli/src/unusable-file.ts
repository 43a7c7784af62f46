import { closeSync, openSync, readSync, statSync } from "node:fs";
import { SCHEMA_VERSION } from "@hermes/schema";
import { HermesStoreError, openReadOnlyDatabase } from "@hermes/store";

/** The 16 bytes every SQLite database file starts with. */
const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");

/** What to do with a file that held sessions and can no longer be read. */
const RESTORE = "If it held your sessions, restore it from a backup";

/**
 * Why a file cannot be a Hermes state.db, from its size and first bytes (read without
 * SQLite, so nothing is locked or created): one line with what to do, or `null`. Every command
 * (`list`, `doctor`, `migrate`, …) gives the same line for the same file: none of them can
 * do anything with it, so none sends the user to another.
 */
export function headerProblem(path: string): string | null {
  const size = statSync(path).size;
  if (size === 0) {
    return (
      `${path} is empty (0 bytes): it holds no sessions and nothing was changed. ${RESTORE}; ` +
      "else delete it (the agent, or 'hermes-sessions import', creates a new one)"
    );
  }
  const head = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(path, "r");
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  if (!head.equals(SQLITE_HEADER)) {
    return `${path} is not a SQLite database (it does not start with SQLite's header); nothing was changed. ${RESTORE}`;
  }
  return null;
}

/** The line for a file whose header is SQLite's but which SQLite cannot read. */
export function damagedFile(path: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // The store's message carries SQLite's in parentheses; SQLite's own is bare.
  const detail = (/\(([^)]*)\)/.exec(message)?.[1] ?? message).replace(/^SQLITE_\w+:\s*/, "");
  return `${path} is a damaged SQLite database (${detail}); nothing was changed. ${RESTORE}`;
}

/** SQLite could not read the file as a database: the store's `STORE_CORRUPT`, or SQLite's own code. */
export function isDamageError(error: unknown): boolean {
  if (error instanceof HermesStoreError) return error.code === "STORE_CORRUPT";
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
}

/**
 * Why a file without a current schema version cannot be read: someone else's SQLite file
 * ({@link foreignFile}), or an older Hermes file that `migrate` upgrades.
 */
export function oldOrForeignFile(path: string, version: number | null): string {
  const foreign = version === null ? foreignFile(path) : null;
  if (foreign !== null) return foreign;
  const found = version === null ? "no schema version" : `schema v${version}`;
  return `${path} has ${found}; run 'hermes-sessions migrate' to upgrade it to v${SCHEMA_VERSION}`;
}

/**
 * The line for someone else's SQLite file (it has tables, none of them `sessions`), which no
 * command reads or upgrades; `null` for any other file. Read-only, without a trace.
 */
export function foreignFile(path: string): string | null {
  const file = openReadOnlyDatabase(path);
  try {
    const tables = file.profile.tables;
    if (tables.size === 0 || tables.has("sessions")) return null;
  } finally {
    file.close();
  }
  return (
    `${path} is a SQLite database but not a Hermes state.db (no sessions table); nothing was changed. ` +
    "Point --db (or HERMES_HOME) at the agent's state.db"
  );
}
