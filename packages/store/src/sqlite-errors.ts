import { accessSync, constants, existsSync } from "node:fs";
import { dirname } from "node:path";
import { BackendError, HermesStoreError, StoreCorruptError } from "@hermes/core";

/** Why `path` cannot be written (read-only file system, no permission), or `null`. */
function unwritableReason(path: string): string | null {
  for (const target of existsSync(path) ? [path, dirname(path)] : [dirname(path)]) {
    try {
      accessSync(target, constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === "EROFS"
        ? `${target} is on a read-only file system`
        : `${target} is not writable (${code})`;
    }
  }
  return null;
}

/** The `code` of a better-sqlite3 `SqliteError` (e.g. `SQLITE_BUSY_SNAPSHOT`), if any. */
export function sqliteCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("SQLITE_") ? code : undefined;
}

/**
 * Lock errors that another connection causes and that a later attempt can get past:
 * `SQLITE_BUSY` (and its `_SNAPSHOT`, `_RECOVERY`, `_TIMEOUT` variants) and `SQLITE_LOCKED`.
 */
export function isBusyError(error: unknown): boolean {
  const code = sqliteCode(error);
  return code !== undefined && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
}

/**
 * Errors that show the database file itself damaged: `SQLITE_CORRUPT` (a b-tree page, the
 * header) and `SQLITE_NOTADB`. Not `SQLITE_CORRUPT_VTAB`: that is a search index (FTS5 shadow
 * tables), derived from `messages` and rebuilt from it without loss.
 */
export function isFileCorruption(error: unknown): boolean {
  const code = sqliteCode(error);
  return (
    code !== undefined &&
    ((code.startsWith("SQLITE_CORRUPT") && code !== "SQLITE_CORRUPT_VTAB") || code === "SQLITE_NOTADB")
  );
}

/**
 * Turns a driver error into the store's typed errors where one fits; other errors pass through.
 */
export function mapSqliteError(error: unknown, path: string): unknown {
  if (error instanceof HermesStoreError) return error;
  const code = sqliteCode(error);
  if (code === undefined) return error;
  const message = (error as Error).message;
  if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") {
    return new StoreCorruptError(
      path,
      `The database ${path} is damaged or not a SQLite database (${code}: ${message}). ` +
        "Nothing was written; keep a copy and run 'hermes-sessions doctor'.",
      { cause: error },
    );
  }
  if (code.startsWith("SQLITE_CANTOPEN")) {
    const reason = unwritableReason(path);
    if (reason !== null) {
      return new HermesStoreError(
        "STORE_READ_ONLY",
        `Cannot open the database ${path} for writing: ${reason}. Point HERMES_HOME (or the path option) at a writable directory.`,
        { cause: error },
      );
    }
    return new BackendError(`Cannot open the database ${path}: ${message}`, {
      cause: error,
      backendCode: code,
    });
  }
  if (code.startsWith("SQLITE_READONLY")) {
    return new HermesStoreError("STORE_READ_ONLY", `The database ${path} is read-only: ${message}`, {
      cause: error,
    });
  }
  if (code === "SQLITE_FULL" || code === "SQLITE_IOERR_WRITE") {
    return new HermesStoreError(
      "STORE_FULL",
      `Could not write to ${path}: the disk is full (${message}). Nothing of this write was kept; free space and retry.`,
      { cause: error },
    );
  }
  return error;
}
