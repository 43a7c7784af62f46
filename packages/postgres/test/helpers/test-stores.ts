import { randomBytes } from "node:crypto";
import {
  type OpenPostgresSessionStoreOptions,
  openPostgresSessionStore,
  type PostgresSessionStore,
} from "@hermes/postgres";
import { afterEach, inject } from "vitest";

/** The connection string of the tests' server (`global-setup.ts`); fails the file without one. */
export function serverUrl(): string {
  const url = inject("pgConnectionString");
  if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);
  return url;
}

/** A schema name no test has used. */
export const freshSchema = (): string => `t_${randomBytes(6).toString("hex")}`;

/**
 * Opens stores on `url`; each is closed after the test that opened it. Call at the top level
 * of a test file (it registers an `afterEach`).
 */
export function storesClosedAfterEach(
  url: string,
): (o: Omit<OpenPostgresSessionStoreOptions, "connectionString" | "pool">) => Promise<PostgresSessionStore> {
  const opened: PostgresSessionStore[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  return async (o) => {
    const store = await openPostgresSessionStore({ connectionString: url, ...o });
    opened.push(store);
    return store;
  };
}
