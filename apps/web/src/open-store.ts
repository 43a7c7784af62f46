import { statSync } from "node:fs";
import type { SessionStore } from "@hermes/core";
import { openSessionStore, resolveStatePath } from "@hermes/store";
import { WebServerError } from "./web-server-error.js";

/** Where the browser reads from and whether it may write. */
export interface ServedDatabase {
  /** A `state.db` path or a `postgres://` URL; default `resolveStatePath()`. */
  db?: string;
  /** Rename, delete and prune from the UI; otherwise the database is opened read-only. */
  allowWrites: boolean;
}

/** `postgres://…` or `postgresql://…`. */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/**
 * Opens the store the browser serves: the one place the server opens a database, read-only
 * unless `allowWrites`. A file must exist (serving never creates one).
 */
export async function openServedStore(target: ServedDatabase): Promise<SessionStore> {
  const db = target.db ?? resolveStatePath();
  const readOnly = !target.allowWrites;
  if (isPostgresUrl(db)) return openPostgres(db, readOnly);
  // With allowWrites the store still opens read-only where it must (a newer agent's file, a
  // folder this process cannot write): `readOnly` is then left to it.
  let isFile = false;
  try {
    isFile = statSync(db).isFile();
  } catch {
    throw new WebServerError("NO_DATABASE", `No database at ${db}`);
  }
  if (!isFile) throw new WebServerError("NO_DATABASE", `${db} is not a database file`);
  // Read-only: nothing written, no -wal/-shm it would not need, no sidecar folder, no chmod.
  // The read workers start before the server answers: no search runs on its thread meanwhile.
  return openSessionStore(
    readOnly ? { path: db, readOnly, warmReaders: true } : { path: db, warmReaders: true },
  );
}

async function openPostgres(url: string, readOnly: boolean): Promise<SessionStore> {
  // Loaded on demand: a user of the embedded store never installs the PostgreSQL driver.
  let adapter: typeof import("@hermes/postgres");
  try {
    adapter = await import("@hermes/postgres");
  } catch (error) {
    throw new WebServerError(
      "POSTGRES_UNAVAILABLE",
      "Serving a PostgreSQL store needs the @hermes/postgres package (npm install @hermes/postgres)",
      { cause: error },
    );
  }
  const parsed = new URL(url);
  const schema = parsed.searchParams.get("schema") ?? undefined;
  parsed.searchParams.delete("schema");
  return adapter.openPostgresSessionStore({ connectionString: parsed.toString(), schema, readOnly });
}
