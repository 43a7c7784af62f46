import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { openPostgresSessionStore, PG_SCHEMA_VERSION, searchColumns } from "@hermes/postgres";
import { canHostPgCluster, type PgCluster, startPgCluster } from "@hermes/postgres/testing";
import Database from "better-sqlite3";
import pg from "pg";
import type { DatasetInfo } from "./ensure-dataset.js";
import { LongStepProgress } from "./long-step-progress.js";

/** Rows per multi-row INSERT (one array per column through `unnest`). */
const BATCH = 5000;

/** Bump when the loader's output changes, so stale cached clusters are not reused. */
const LOADER_VERSION = 4;

/** A running PostgreSQL server holding a data set, and how it got there. */
export interface PgDataset {
  readonly cluster: PgCluster;
  readonly connectionString: string;
  /** Milliseconds the load took (this run's, or the cached cluster's first). */
  readonly loadedInMs: number;
  /** Whether this run loaded it (`false`: the cluster was cached). */
  readonly loadedNow: boolean;
  /** Phases of the load in ms (rows, indexes, analyze). */
  readonly phases: Readonly<Record<string, number>>;
}

interface Marker {
  readonly dataset: string;
  readonly messages: number;
  readonly sessions: number;
  readonly loadedInMs: number;
  readonly phases: Record<string, number>;
  readonly schemaVersion: number;
  readonly loaderVersion: number;
}

/**
 * Server settings of the bench's clusters (both documented in @hermes/postgres's README):
 * memory for the index and the sorts a GIN fallback needs, room to build the search indexes
 * in memory, and new WAL segments created without zero-filling them (each zero-fill stalled
 * every committer for ~50 ms). synchronous_commit and fsync stay on.
 */
export const PG_BENCH_SETTINGS = {
  shared_buffers: "2GB",
  effective_cache_size: "8GB",
  work_mem: "32MB",
  random_page_cost: "1.1",
  maintenance_work_mem: "1GB",
  max_wal_size: "8GB",
  checkpoint_timeout: "30min",
  wal_init_zero: "off",
};
const SETTINGS = PG_BENCH_SETTINGS;

/**
 * A local PostgreSQL cluster holding the cached SQLite data set `data`, loaded with the
 * store's schema and search columns (computed by the adapter's own functions), kept under
 * `dataDir` keyed by the data set's file name and the schema version, so later runs only
 * start it. The load writes the rows in multi-row INSERTs with the message indexes dropped
 * and builds them afterwards (much faster than per-row index maintenance), then analyzes;
 * the cluster counts as cached only once a marker file records a finished load.
 */
export async function ensurePgDataset(
  data: DatasetInfo,
  dataDir: string,
  log: (message: string) => void,
): Promise<PgDataset> {
  const name = basename(data.path, ".db");
  if (!canHostPgCluster(dataDir)) {
    // The server cannot reach the data directory (e.g. a 0700 temp directory of root's): a
    // throwaway cluster, loaded every run.
    log(`PostgreSQL cannot reach ${dataDir}: loading into a throwaway cluster (not cached)`);
    return loadFresh(await startPgCluster({ durable: true, settings: SETTINGS }), data, log);
  }
  const dir = join(dataDir, `pg-${name}-s${PG_SCHEMA_VERSION}`);
  const markerPath = join(dir, "loaded.json");
  const marker = readMarker(markerPath);
  if (
    marker !== null &&
    marker.messages === data.messages &&
    marker.loaderVersion === LOADER_VERSION &&
    marker.schemaVersion === PG_SCHEMA_VERSION
  ) {
    const cluster = await startPgCluster({ durable: true, dir, settings: SETTINGS });
    log(`PostgreSQL data set cached in ${dir}`);
    return {
      cluster,
      connectionString: cluster.connectionString,
      loadedInMs: marker.loadedInMs,
      loadedNow: false,
      phases: marker.phases,
    };
  }
  // A half-finished load of an interrupted run is thrown away.
  rmSync(dir, { recursive: true, force: true });
  const loaded = await loadFresh(await startPgCluster({ durable: true, dir, settings: SETTINGS }), data, log);
  const record: Marker = {
    dataset: name,
    messages: data.messages,
    sessions: data.sessions,
    loadedInMs: loaded.loadedInMs,
    phases: { ...loaded.phases },
    schemaVersion: PG_SCHEMA_VERSION,
    loaderVersion: LOADER_VERSION,
  };
  // Written last: only a finished load counts as cached.
  writeFileSync(markerPath, `${JSON.stringify(record, null, 2)}\n`);
  return loaded;
}

/** Loads `data` into the fresh `cluster`, which is stopped if the load fails. */
async function loadFresh(
  cluster: PgCluster,
  data: DatasetInfo,
  log: (message: string) => void,
): Promise<PgDataset> {
  try {
    const t0 = performance.now();
    const phases = await load(cluster.connectionString, data, log);
    const loadedInMs = performance.now() - t0;
    return { cluster, connectionString: cluster.connectionString, loadedInMs, loadedNow: true, phases };
  } catch (error) {
    cluster.stop();
    throw error;
  }
}

function readMarker(path: string): Marker | null {
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Marker;
  } catch {
    return null;
  }
}

async function columnTypes(client: pg.Client, table: string): Promise<Map<string, string>> {
  const rows = (
    await client.query<{ column_name: string; data_type: string }>(
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1",
      [table],
    )
  ).rows;
  return new Map(rows.map((r) => [r.column_name, r.data_type]));
}

/** `INSERT … SELECT FROM unnest($1::t1[], $2::t2[], …)` for `columns` of `table`. */
function unnestInsert(table: string, columns: readonly string[], types: Map<string, string>): string {
  const arrays = columns.map((c, i) => `$${i + 1}::${types.get(c) ?? "text"}[]`);
  return `INSERT INTO ${table} (${columns.join(", ")}) SELECT * FROM unnest(${arrays.join(", ")})`;
}

async function load(
  connectionString: string,
  data: DatasetInfo,
  log: (message: string) => void,
): Promise<Record<string, number>> {
  const phases: Record<string, number> = {};
  let t = performance.now();
  const lap = (phase: string) => {
    const now = performance.now();
    phases[phase] = Math.round(now - t);
    t = now;
  };
  // The store creates the schema (tables, search columns, indexes) as in production, and drops
  // its search indexes for the load as migrate-to-postgres does (built again by the store).
  const setup = await openPostgresSessionStore({ connectionString });
  try {
    if (!(await setup.deferSearchIndexes())) throw new Error("the bench's PostgreSQL schema is not empty");
  } finally {
    await setup.close();
  }
  const sqlite = new Database(data.path, { readonly: true });
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    // Not durable per batch (the load is redone whole if interrupted).
    await client.query("SET synchronous_commit = off");
    // The other indexes the store made on messages, rebuilt after the rows from their own
    // definitions.
    const indexes = (
      await client.query<{ indexname: string; indexdef: string }>(
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'messages' AND indexname <> 'messages_pkey'",
      )
    ).rows;
    for (const index of indexes) await client.query(`DROP INDEX ${index.indexname}`);

    const sessionColumns = (sqlite.pragma("table_info(sessions)") as Array<{ name: string }>).map(
      (c) => c.name,
    );
    const messageColumns = (sqlite.pragma("table_info(messages)") as Array<{ name: string }>).map(
      (c) => c.name,
    );
    const sessionSql = unnestInsert("sessions", sessionColumns, await columnTypes(client, "sessions"));
    const messageSql = unnestInsert(
      "messages",
      [...messageColumns, "search_vector", "search_grams"],
      await columnTypes(client, "messages"),
    );

    log(`loading ${data.sessions.toLocaleString("en-US")} sessions into PostgreSQL`);
    // Parents before children: the foreign key is checked per row.
    const sessions = sqlite
      .prepare(
        `WITH RECURSIVE t(id, depth) AS (
           SELECT id, 0 FROM sessions WHERE parent_session_id IS NULL
             OR parent_session_id NOT IN (SELECT id FROM sessions)
           UNION ALL SELECT s.id, t.depth + 1 FROM sessions s JOIN t ON s.parent_session_id = t.id)
         SELECT s.* FROM sessions s JOIN t ON t.id = s.id ORDER BY t.depth, s.rowid`,
      )
      .raw(true)
      .iterate() as IterableIterator<unknown[]>;
    await insertBatches(client, sessionSql, sessions, sessionColumns.length, (row) => row);
    lap("sessions");

    const bar = new LongStepProgress("messages → PostgreSQL", data.messages);
    const contentAt = messageColumns.indexOf("content");
    const toolCallsAt = messageColumns.indexOf("tool_calls");
    const toolNameAt = messageColumns.indexOf("tool_name");
    const messages = sqlite
      .prepare("SELECT * FROM messages ORDER BY id")
      .raw(true)
      .iterate() as IterableIterator<unknown[]>;
    let done = 0;
    await insertBatches(
      client,
      messageSql,
      messages,
      messageColumns.length + 2,
      (row) => {
        const content = row[contentAt] as string | null;
        const toolCalls = row[toolCallsAt] as string | null;
        const toolName = row[toolNameAt] as string | null;
        const search = searchColumns(content, toolCalls, toolName);
        return [...row, search.vector, search.grams];
      },
      (n) => {
        done += n;
        bar.update(done);
      },
    );
    bar.finish();
    await client.query(
      "SELECT setval(pg_get_serial_sequence('messages', 'id'), GREATEST((SELECT COALESCE(MAX(id), 0) FROM messages), 1))",
    );
    lap("messages");

    log(`building ${indexes.length} message indexes, then the search indexes`);
    await client.query("SET max_parallel_maintenance_workers = 2");
    for (const index of indexes) await client.query(index.indexdef);
    // The search indexes as the store lays them out after a bulk load (with RUM: one sealed
    // range of every message and an empty open range).
    const store = await openPostgresSessionStore({ connectionString });
    try {
      await store.buildSearchIndexes();
    } finally {
      await store.close();
    }
    lap("indexes");
    await client.query("VACUUM (ANALYZE) sessions, messages, state_meta");
    lap("analyze");
    const count = Number((await client.query("SELECT count(*) AS n FROM messages")).rows[0].n);
    if (count !== data.messages) throw new Error(`loaded ${count} messages, expected ${data.messages}`);
    return phases;
  } finally {
    await client.end().catch(() => {});
    sqlite.close();
  }
}

/**
 * Sends `rows` in batches of {@link BATCH}, one array per column; the next batch is read and
 * prepared while the server writes the previous one.
 */
async function insertBatches(
  client: pg.Client,
  sql: string,
  rows: IterableIterator<unknown[]>,
  width: number,
  prepare: (row: unknown[]) => unknown[],
  progress?: (n: number) => void,
): Promise<void> {
  let pending: Promise<unknown> = Promise.resolve();
  let pendingRows = 0;
  for (;;) {
    const columns: unknown[][] = Array.from({ length: width }, () => []);
    let n = 0;
    // next() by hand: leaving a for…of early would close the statement's iterator.
    while (n < BATCH) {
      const next = rows.next();
      if (next.done === true) break;
      const row = prepare(next.value);
      for (let i = 0; i < width; i++) columns[i]!.push(row[i] ?? null);
      n++;
    }
    await pending;
    progress?.(pendingRows);
    if (n === 0) return;
    pendingRows = n;
    pending = client.query(sql, columns);
  }
}
