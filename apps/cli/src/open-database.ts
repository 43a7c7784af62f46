import { accessSync, constants, existsSync, rmSync, statSync } from "node:fs";
import type { SessionStore } from "@hermes/core";
import { SCHEMA_VERSION } from "@hermes/schema";
import {
  type OpenSessionStoreOptions,
  openReadOnlyDatabase,
  openSessionStore,
  type ReadOnlyDatabase,
  resolveStatePath,
} from "@hermes/store";
import { CliError } from "./cli-error.js";
import type { GlobalOptions } from "./global-options.js";
import { loadPostgres } from "./load-postgres.js";
import { damagedFile, headerProblem, isDamageError, oldOrForeignFile } from "./unusable-file.js";

/** Where the database is and how the path was chosen (for "not found" messages). */
export interface DatabaseLocation {
  path: string;
  /** `--db`, `$HERMES_HOME` or the default `~/.hermes`. */
  origin: string;
}

/** The database path a command works on: `--db`, else `resolveStatePath()`. */
export function locateDatabase(options: GlobalOptions): DatabaseLocation {
  if (options.db !== undefined) return { path: options.db, origin: "--db" };
  const home = process.env.HERMES_HOME;
  return {
    path: resolveStatePath(),
    origin:
      home !== undefined && home !== "" ? "$HERMES_HOME" : "the default ~/.hermes (set HERMES_HOME or --db)",
  };
}

/**
 * Fails unless a database file exists at the location, so read commands never create one.
 */
export function requireExisting(location: DatabaseLocation): void {
  if (!existsSync(location.path)) {
    throw new CliError(`No database at ${location.path} (looked there because of ${location.origin})`);
  }
  if (statSync(location.path).isDirectory()) {
    throw new CliError(`${location.path} is a directory, not a database file`);
  }
  try {
    accessSync(location.path, constants.R_OK);
  } catch {
    throw new CliError(`Cannot read ${location.path} (permission denied)`);
  }
  // An empty or non-SQLite file: the same line from every command (none can use it).
  const problem = headerProblem(location.path);
  if (problem !== null) throw new CliError(problem);
}

/**
 * Opens an existing file for raw read-only SQL without leaving a trace (no `-wal`/`-shm`, no
 * mode change; see `openReadOnlyDatabase`), or a one-line error.
 */
export function openFileReadOnly(path: string, o: { snapshotMaxBytes?: number } = {}): ReadOnlyDatabase {
  try {
    return openReadOnlyDatabase(path, o);
  } catch (error) {
    throw new CliError(damagedFile(path, error), 1, { cause: error });
  }
}

/**
 * Reads `schema_version` before a command that writes opens the file: `null` without a version
 * row (an empty or foreign SQLite file). Never copies the file into memory to do it: in a
 * folder it can write, a WAL file's empty `-wal`/`-shm` may appear, which the writing store
 * opened next uses (and removes when it closes last).
 */
export function peekSchemaVersion(path: string): number | null {
  const sidecars = [`${path}-wal`, `${path}-shm`];
  const fresh = sidecars.filter((p) => !existsSync(p));
  let file: ReadOnlyDatabase;
  try {
    file = openFileReadOnly(path, { snapshotMaxBytes: 0 });
  } catch (error) {
    // A damaged WAL file: no store opens next to remove the sidecars SQLite just made, so they
    // go now (only those that were not there and hold nothing), leaving the folder as it was.
    for (const p of fresh) if (existsSync(p) && (p.endsWith("-shm") || statSync(p).size === 0)) rmSync(p);
    throw error;
  }
  try {
    return file.profile.schemaVersion;
  } finally {
    file.close();
  }
}

/** A file too old to read without an upgrade (`migrate`), or someone else's SQLite file. */
function needsMigrate(path: string, version: number | null): CliError {
  return new CliError(oldOrForeignFile(path, version));
}

/**
 * Opens an existing database for a command that only reads (`list`, `show`, `search`,
 * `stats`, `export`, `follow`, `doctor`): read-only, so the file's bytes, mode, journal mode and folder
 * stay as they are, even a live agent's or another user's. A newer agent's file is read with
 * its own rules. A file below schema v11 is not read: the user is told to run `migrate`.
 */
export async function openForReading(options: GlobalOptions): Promise<SessionStore> {
  const location = locateDatabase(options);
  if (isPostgresUrl(location.path)) return openPostgres(location.path, { readOnly: true });
  requireExisting(location);
  let store: Awaited<ReturnType<typeof openSessionStore>>;
  try {
    store = await openSessionStore({ path: location.path, readOnly: true });
  } catch (error) {
    if (isDamageError(error)) {
      throw new CliError(damagedFile(location.path, error), 1, { cause: error });
    }
    throw error;
  }
  const version = store.access.schemaVersion;
  if (version === null || version < SCHEMA_VERSION) {
    await store.close();
    throw needsMigrate(location.path, version);
  }
  return store;
}

/**
 * Opens an existing database for a command that writes. A file below schema v11 is not
 * upgraded behind the user's back: they are told to run `hermes-sessions migrate` (which shows
 * progress).
 */
export async function openExisting(
  options: GlobalOptions,
  extra: Omit<OpenSessionStoreOptions, "path"> = {},
): Promise<SessionStore> {
  const location = locateDatabase(options);
  if (isPostgresUrl(location.path)) return openPostgres(location.path);
  requireExisting(location);
  const version = peekSchemaVersion(location.path);
  if (version === null || version < SCHEMA_VERSION) throw needsMigrate(location.path, version);
  // A newer agent's file, or one this user cannot write, opens read-only: writes then fail
  // with a one-line SCHEMA_NEWER / STORE_READ_ONLY error, and the file stays as it was.
  return openSessionStore({ ...extra, path: location.path });
}

/** Opens (creating when missing) the database, for commands that write new data (`import`). */
export async function openOrCreate(
  options: GlobalOptions,
  extra: Omit<OpenSessionStoreOptions, "path"> = {},
): Promise<SessionStore> {
  const location = locateDatabase(options);
  if (isPostgresUrl(location.path)) return openPostgres(location.path);
  if (existsSync(location.path)) return openExisting(options, extra);
  return openSessionStore({ ...extra, path: location.path });
}

/** Runs `fn` with an open store and always closes it. */
export async function withStore<T>(store: SessionStore, fn: (store: SessionStore) => Promise<T>): Promise<T> {
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** `--db postgres://…` (or `postgresql://…`): the store on a PostgreSQL server (`@hermes/postgres`). */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/**
 * Opens the PostgreSQL store named by a connection URL (`?schema=` picks a schema); `readOnly`
 * creates and migrates nothing and runs every session read-only.
 */
export async function openPostgres(url: string, o: { readOnly?: boolean } = {}): Promise<SessionStore> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get("schema") ?? undefined;
  parsed.searchParams.delete("schema");
  const { openPostgresSessionStore } = await loadPostgres();
  try {
    return await openPostgresSessionStore({
      connectionString: parsed.toString(),
      schema,
      ...(o.readOnly === true ? { readOnly: true } : {}),
    });
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new CliError(`Cannot open the PostgreSQL store at ${parsed.host}: ${detail}`, 1, { cause: error });
  }
}
