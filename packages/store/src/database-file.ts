import { chmodSync, linkSync, lstatSync, rmSync } from "node:fs";
import { StoreCorruptError, UnsafePathError } from "@hermes/core";
import type { DatabaseConnection } from "./database-connection.js";
import { databaseFiles } from "./file-security.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function sizeOf(path: string): number | null {
  try {
    return lstatSync(path).size;
  } catch {
    return null;
  }
}

/**
 * Checks an existing database path before SQLite opens it, without opening a descriptor of
 * our own (closing any descriptor of a live SQLite file drops this process's POSIX locks).
 *
 * - not a regular file → `UNSAFE_PATH`;
 * - zero bytes (after a short grace period, since another process's `connect()` creates an
 *   empty file an instant before writing its header) → `STORE_CORRUPT`: SQLite would silently
 *   treat it as a new, empty database, hiding that the user's history is gone.
 *
 * @returns whether the file exists.
 */
export async function preflightDatabaseFile(path: string): Promise<boolean> {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return false;
  }
  if (!st.isFile()) {
    throw new UnsafePathError(path, `Refusing to open ${path}: it is not a regular file`);
  }
  for (let waited = 0; sizeOf(path) === 0 && waited < 500; waited += 50) await sleep(50);
  if (sizeOf(path) === 0 && !(sizeOf(`${path}-wal`) ?? 0)) {
    throw new StoreCorruptError(
      path,
      `The database ${path} is empty (0 bytes): it is damaged or was truncated. ` +
        "Nothing was changed; restore it from a backup, or delete it to start a new database.",
    );
  }
  return true;
}

/**
 * Checks an opened database cheaply: the header must parse (a file that is not SQLite fails
 * here with `SQLITE_NOTADB`), and, when the WAL holds no frames, the file must be as long as
 * its header says (a truncated file loses whole pages at its end).
 */
export function verifyOpenedDatabase(conn: DatabaseConnection): void {
  conn.db.pragma("schema_version", { simple: true });
  const walSize = sizeOf(`${conn.path}-wal`) ?? 0;
  if (walSize > 0) return; // pages may live in the WAL; the header size is not final
  const pageSize = Number(conn.db.pragma("page_size", { simple: true }));
  const pageCount = Number(conn.db.pragma("page_count", { simple: true }));
  const fileSize = sizeOf(conn.path) ?? 0;
  if (pageCount * pageSize > fileSize) {
    throw new StoreCorruptError(
      conn.path,
      `The database ${conn.path} is truncated (${fileSize} bytes, header says ${pageCount * pageSize}). ` +
        "Nothing was changed; restore it from a backup.",
    );
  }
}

/**
 * Creates a new database so that it appears at `path` fully formed: it is built under a
 * private temporary name (schema, WAL mode, mode 0600) and then hard-linked into place, which
 * fails if another process created `path` meanwhile (then theirs is used). A crash during
 * creation leaves at most a temporary file, never an empty or half-made `state.db`.
 *
 * @returns what `build` returned, or `undefined` when another process won the race.
 */
export async function createDatabaseAtomically<T>(
  path: string,
  build: (tempPath: string) => Promise<T>,
): Promise<T | undefined> {
  const temp = `${path}.creating-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const cleanup = () => {
    for (const file of databaseFiles(temp)) rmSync(file, { force: true });
  };
  try {
    const result = await build(temp);
    chmodSync(temp, 0o600);
    try {
      linkSync(temp, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return undefined;
      throw error;
    }
    return result;
  } finally {
    cleanup();
  }
}

/** The oldest SQLite this store accepts: 3.51.3 fixes a WAL-reset bug that can corrupt a WAL database. */
export const MIN_SQLITE_VERSION = "3.51.3";

function versionNumber(version: string): number {
  const [a = 0, b = 0, c = 0] = version.split(".").map((p) => Number.parseInt(p, 10) || 0);
  return a * 1_000_000 + b * 1_000 + c;
}

/** Whether `version` (e.g. `3.53.2`) is at least {@link MIN_SQLITE_VERSION}. */
export function isSupportedSqliteVersion(version: string): boolean {
  return versionNumber(version) >= versionNumber(MIN_SQLITE_VERSION);
}
