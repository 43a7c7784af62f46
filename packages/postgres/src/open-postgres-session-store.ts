import {
  InvalidArgumentError,
  nonNegativeInt,
  optionsObject,
  type PostgresBackendInfo,
  requireId,
  StoreReadOnlyError,
} from "@hermes/core";
import { sql } from "kysely";
import pg from "pg";
import { createPgDb, type PgDb } from "./pg-database.js";
import { mapPgError } from "./pg-errors.js";
import { inspectPg, migratePg, PG_SCHEMA_VERSION } from "./pg-schema.js";
import { PostgresSessionStore } from "./postgres-session-store.js";
import type { WordIndexOptions } from "./search/word-index.js";
import { readWordRanges } from "./search/word-ranges.js";

/** Options of {@link openPostgresSessionStore}. */
export interface OpenPostgresSessionStoreOptions {
  /** `postgres://user@host:port/db`; the store creates (and closes) its own pool. */
  connectionString?: string;
  /** A pool of yours (closed by you, not by `close()`); its connections must use `schema` if given. */
  pool?: pg.Pool;
  /**
   * Schema holding the tables (default: the connection's `search_path`, usually `public`);
   * created when missing. Only with `connectionString`.
   */
  schema?: string;
  /** Most connections of the pool the store creates (default 10). */
  maxConnections?: number;
  /** Total patience of one write under serialization failures or deadlocks, in ms (default 30 000). */
  writeDeadlineMs?: number;
  /**
   * `true`: read an existing store and change nothing: no schema, table or extension is
   * created or migrated, and every write method rejects with `STORE_READ_ONLY` before reaching
   * the server. With `connectionString`, the pool's sessions also run with
   * `default_transaction_read_only = on`, so the server itself refuses any write; with a pool of
   * yours, give it a read-only role for the same guarantee. An empty schema is `STORE_READ_ONLY`.
   */
  readOnly?: boolean;
  /**
   * The split word index (servers with RUM): `sealEvery` (appends between seals, default
   * 20,000), `refreshMs` (how long the store trusts the ranges it read, default 1,000),
   * `dropDelayMs` (how long a seal keeps the indexes it replaced, default 5,000).
   */
  wordIndex?: WordIndexOptions;
  /** Clock in Unix epoch seconds; for tests. */
  clock?: () => number;
}

/** Checks `wordIndex` (each field a positive integer of milliseconds or ids). */
function wordIndexOptions(value: WordIndexOptions): WordIndexOptions {
  const o = optionsObject("wordIndex", value) as Record<string, unknown>;
  const out: Record<string, number> = {};
  for (const [key, min] of [
    ["sealEvery", 1],
    ["refreshMs", 0],
    ["dropDelayMs", 0],
  ] as const) {
    const v = o[key];
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min)
      throw new InvalidArgumentError(
        `wordIndex.${key}`,
        `wordIndex.${key} must be an integer of at least ${min}`,
      );
    out[key] = v;
  }
  return out;
}

/** The schema the pool's connections use (their `search_path`'s first) and the server's version. */
async function backendInfo(db: PgDb): Promise<PostgresBackendInfo> {
  const { rows } = await sql<{ schema: string; version: string }>`
    SELECT current_schema() AS schema, current_setting('server_version') AS version`.execute(db);
  return Object.freeze({ kind: "postgres", schema: rows[0]!.schema, serverVersion: rows[0]!.version });
}

/** Validates a schema name (an SQL identifier we create and quote). */
function schemaName(value: unknown): string {
  if (typeof value !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(value)) {
    throw new InvalidArgumentError("schema", "schema must be an SQL identifier (letters, digits, _)");
  }
  return value;
}

/**
 * Opens the store on a PostgreSQL server and brings its schema up to date (under an advisory
 * lock, so instances starting together migrate once).
 *
 * @example
 * const store = await openPostgresSessionStore({ connectionString: "postgres://app@db/hermes" });
 * await store.createSession({ id: "s1", source: "gateway" });
 */
export async function openPostgresSessionStore(
  o: OpenPostgresSessionStoreOptions,
): Promise<PostgresSessionStore> {
  const opts = optionsObject("options", o);
  const deadlineMs = opts.writeDeadlineMs ?? 30_000;
  if (typeof deadlineMs !== "number" || !Number.isFinite(deadlineMs) || deadlineMs < 0) {
    throw new InvalidArgumentError("writeDeadlineMs", "writeDeadlineMs must be a non-negative number");
  }
  const schema = opts.schema === undefined ? null : schemaName(opts.schema);
  if (opts.readOnly !== undefined && typeof opts.readOnly !== "boolean") {
    throw new InvalidArgumentError("readOnly", "readOnly must be a boolean");
  }
  const readOnly = opts.readOnly === true;
  const wordIndex = opts.wordIndex === undefined ? {} : wordIndexOptions(opts.wordIndex);
  let pool: pg.Pool;
  let owns: boolean;
  if (opts.pool !== undefined) {
    if (!(opts.pool instanceof pg.Pool)) throw new InvalidArgumentError("pool", "pool must be a pg Pool");
    if (schema !== null) throw new InvalidArgumentError("schema", "schema is only for connectionString");
    pool = opts.pool;
    owns = false;
  } else {
    const connectionString = requireId("connectionString", opts.connectionString);
    if (schema !== null && !readOnly) {
      // The schema must exist before the pool's connections point their search_path at it: made
      // on a one-connection pool of its own, under a session-level advisory lock (released when
      // that pool ends) so that instances starting together do not race on CREATE SCHEMA.
      const setupPool = new pg.Pool({ connectionString, max: 1 });
      const setup = createPgDb(setupPool);
      try {
        await setup.connection().execute(async (db) => {
          await sql`SELECT pg_advisory_lock(hashtext('hermes-sessions-schema'))`.execute(db);
          await db.schema.createSchema(schema).ifNotExists().execute();
        });
      } catch (error) {
        throw mapPgError(error);
      } finally {
        await setupPool.end().catch(() => {});
      }
    }
    pool = new pg.Pool({
      connectionString,
      max: nonNegativeInt("maxConnections", opts.maxConnections, 10, 1000) || 10,
      ...(readOnly || schema !== null
        ? {
            options: [
              ...(schema === null ? [] : [`-c search_path="${schema}",public`]),
              // The server refuses every write of these sessions (SQLSTATE 25006).
              ...(readOnly ? ["-c default_transaction_read_only=on"] : []),
            ].join(" "),
          }
        : {}),
    });
    // An idle connection the server drops (restart, admin shutdown) is discarded by the pool;
    // without a listener its 'error' event would crash the process.
    pool.on("error", () => {});
    owns = true;
  }
  const db = createPgDb(pool, { shared: !owns });
  try {
    const migration = readOnly ? await inspectPg(db) : await migratePg(db);
    if (migration === null) {
      throw new StoreReadOnlyError(
        "postgresql",
        `the schema ${schema ?? "of the connection's search_path"} holds no session store, and a read-only open creates nothing`,
        "A read-only open",
      );
    }
    // This store's queries read the current layout; a read-only open never upgrades one.
    if (readOnly && (migration.toVersion ?? 0) < PG_SCHEMA_VERSION) {
      throw new StoreReadOnlyError(
        "postgresql",
        `the schema ${schema ?? "of the connection's search_path"} holds store schema v${migration.toVersion}, which this version reads after upgrading it to v${PG_SCHEMA_VERSION}; open it once without readOnly to upgrade it`,
        "A read-only open",
      );
    }
    const backend = await backendInfo(db);
    const clock = opts.clock ?? (() => Date.now() / 1000);
    const ranges = await readWordRanges(db);
    return new PostgresSessionStore(
      { pool, ownsPool: owns, db, deadlineMs, schema: backend.schema, clock, ranges, readOnly, wordIndex },
      migration,
      backend,
    );
  } catch (error) {
    if (owns) await pool.end().catch(() => {});
    throw mapPgError(error);
  }
}
