/**
 * What a store runs on (`store.backend`), one shape per kind, told apart by `kind`. Details that
 * only one backend has (a file path, a schema name) live here rather than on `SessionStore`.
 *
 * @example
 * if (store.backend.kind === "sqlite") console.log(`writing ${store.backend.path}`);
 */
export type BackendInfo = SqliteBackendInfo | PostgresBackendInfo | CustomBackendInfo;

/** A `state.db` file served by `@hermes/store`. */
export interface SqliteBackendInfo {
  readonly kind: "sqlite";
  /** The database file. */
  readonly path: string;
  /** The SQLite library linked into the driver, e.g. `3.51.3`. */
  readonly sqliteVersion: string;
}

/** A PostgreSQL schema served by `@hermes/postgres`. */
export interface PostgresBackendInfo {
  readonly kind: "postgres";
  /** The schema that holds the tables. */
  readonly schema: string;
  /** The server's version (its `server_version` setting), e.g. `15.14`. */
  readonly serverVersion: string;
}

/**
 * Any other implementation of `SessionStore` (a third party's). `name` identifies it (a package
 * name, say); `details` carries what its users may want to read.
 */
export interface CustomBackendInfo {
  readonly kind: "custom";
  readonly name: string;
  readonly details?: Readonly<Record<string, unknown>>;
}
