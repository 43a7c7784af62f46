import { accessSync, constants, existsSync, statSync } from "node:fs";
import type { SessionStore } from "@hermes/core";
import { SCHEMA_VERSION } from "@hermes/schema";
import { type OpenSessionStoreOptions, openSessionStore, resolveStatePath } from "@hermes/store";
import Database from "better-sqlite3";
import { CliError } from "./cli-error.js";
import type { GlobalOptions } from "./global-options.js";
import { loadPostgres } from "./load-postgres.js";

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
}

/**
 * Reads `schema_version` through a read-only connection, without touching the file.
 * `null`: no version row (an empty or foreign SQLite file).
 */
export function peekSchemaVersion(path: string): number | null {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const hasTable = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version'")
      .get();
    if (hasTable === undefined) return null;
    const row = db.prepare("SELECT version FROM schema_version LIMIT 1").get() as
      | { version: number }
      | undefined;
    return row === undefined ? null : Number(row.version);
  } catch (error) {
    throw new CliError(`${path} is not a readable SQLite database: ${(error as Error).message}`, 1, {
      cause: error,
    });
  } finally {
    db?.close();
  }
}

/**
 * Opens an existing database for a command. A file below schema v11 is not upgraded behind the
 * user's back: they are told to run `hermes-sessions migrate` (which shows progress).
 */
export async function openExisting(
  options: GlobalOptions,
  extra: Omit<OpenSessionStoreOptions, "path"> = {},
): Promise<SessionStore> {
  const location = locateDatabase(options);
  if (isPostgresUrl(location.path)) return openPostgres(location.path);
  requireExisting(location);
  const version = peekSchemaVersion(location.path);
  if (version === null || version < SCHEMA_VERSION) {
    const found = version === null ? "no schema version" : `schema v${version}`;
    throw new CliError(
      `${location.path} has ${found}; run 'hermes-sessions migrate' to upgrade it to v${SCHEMA_VERSION}`,
    );
  }
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

/** Opens the PostgreSQL store named by a connection URL (`?schema=` picks a schema). */
export async function openPostgres(url: string): Promise<SessionStore> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get("schema") ?? undefined;
  parsed.searchParams.delete("schema");
  const { openPostgresSessionStore } = await loadPostgres();
  try {
    return await openPostgresSessionStore({ connectionString: parsed.toString(), schema });
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new CliError(`Cannot open the PostgreSQL store at ${parsed.host}: ${detail}`, 1, { cause: error });
  }
}
