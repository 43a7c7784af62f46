// Opening a state.db: options checked, a new file created atomically, the SQLite version and WAL
// mode checked, the migrations run, and the write path (queue, writers' turns, shared commits) set up.
// A read-only open, a newer agent's file and a file this process cannot write take the read-only
// path instead (open-read-only-store.ts), before anything could write.
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import {
  BackendError,
  HermesStoreError,
  InvalidArgumentError,
  SchemaNewerError,
  StoreReadOnlyError,
} from "@hermes/core";
import {
  composeChain,
  coreSchema,
  type MigrationProgress,
  type MigrationReport,
  runMigrations,
  SCHEMA_VERSION,
} from "@hermes/schema";
import { searchSchema } from "@hermes/search";
import { DatabaseConnection } from "./database-connection.js";
import {
  createDatabaseAtomically,
  isSupportedSqliteVersion,
  MIN_SQLITE_VERSION,
  preflightDatabaseFile,
  verifyOpenedDatabase,
} from "./database-file.js";
import { ensureParentDirectory, refuseSymlinks, tightenPermissions } from "./file-security.js";
import {
  newerSchemaVersion,
  openReadOnlyParts,
  type ReadOnlyCause,
  writeBlocker,
} from "./open-read-only-store.js";
import { ReadPool } from "./read-pool/read-pool.js";
import { SessionStore } from "./session-store.js";
import type { CjkIndexMode } from "./side-index/cjk-side-index.js";
import { isBusyError, mapSqliteError } from "./sqlite-errors.js";
import { resolveStatePath } from "./state-path.js";
import { openWritePath, type WritePath, type WritePathSettings } from "./write/write-path.js";
import { DEFAULT_WRITE_POLICY } from "./write/write-policy.js";
import { WriteQueue } from "./write/write-queue.js";
import { WriterThread } from "./write/writer-thread.js";

/** Options of {@link openSessionStore}. */
export interface OpenSessionStoreOptions {
  /** Database file; default `resolveStatePath()`. The parent directory is created (0700). */
  path?: string;
  /**
   * `true`: open an existing file for reading only. Nothing is written or created (no
   * `-wal`/`-shm` SQLite does not need, no `<path>-writers/` folder, no index of ours, no
   * temporary file), no mode is changed and the journal mode stays what it is; every write
   * method rejects with `STORE_READ_ONLY`. See the package README for how a file is read.
   *
   * Unset (the default): read-write, except that a file written by a newer Hermes Agent
   * (`schema_version` above 11) opens read-only (its writes reject with `SCHEMA_NEWER`), and
   * so does a file this process cannot write (its folder, the file or a sidecar not writable,
   * a read-only file system); `readOnlyReason` says why.
   *
   * `false`: read-write or fail: `SCHEMA_NEWER` for a newer agent's file, `STORE_READ_ONLY`
   * for a file this process cannot write.
   */
  readOnly?: boolean;
  /**
   * Read-only opens: largest WAL-mode file (with no `-wal` beside it) read into memory rather
   * than through a read-only connection, which would leave empty `-wal`/`-shm` files behind
   * (default 256 MiB). In a folder this process cannot write, memory is the only way, whatever
   * the size.
   */
  readOnlySnapshotMaxBytes?: number;
  /** Total patience of one write under contention, in ms (default 30 000), then `STORE_BUSY`. */
  writeDeadlineMs?: number;
  /**
   * SQLite's own busy handler, in ms (default 5; 1000 for a read-only store, whose reads of a
   * rollback-journal file wait while a writer commits). Kept short because better-sqlite3
   * waits synchronously, freezing the event loop; longer waits happen between attempts, on
   * timers. Not used by the caller's thread while the store's short-CJK builder runs (its writes
   * then wait on timers only).
   */
  busyTimeoutMs?: number;
  /** Durability (default `FULL`, as the reference). `NORMAL` may lose the last commits on power loss. */
  synchronous?: "OFF" | "NORMAL" | "FULL" | "EXTRA";
  /**
   * PASSIVE checkpoint after this many committed write transactions (default 50, as the
   * reference, where each write is one transaction; a group commit counts once).
   */
  checkpointEvery?: number;
  /** `journal_size_limit` in bytes (default 16 MiB): the WAL is truncated to this after a reset. */
  journalSizeLimit?: number;
  /**
   * Group commit: the most writes of this process committed together in one transaction
   * (default 64). Writes that arrive while a transaction commits share the next one, each in its
   * own savepoint; `1` gives one transaction per write.
   */
  maxGroupSize?: number;
  /**
   * WAL size in bytes (default 32 MiB) above which checkpoints escalate from PASSIVE to TRUNCATE,
   * holding this process's writes back briefly so readers with old snapshots let go of the WAL.
   */
  walMaxBytes?: number;
  /**
   * Writers of several processes take turns at the write lock in arrival order (default
   * `true`): a small queue file in `<path>-writers/` records who waits, and each commit wakes the
   * oldest waiter. `false`: every write races for the lock on its own timers (the last process
   * to commit then tends to win again, and the others wait longer).
   */
  fairWrites?: boolean;
  /**
   * With `fairWrites`, appends that wait for the lock are posted for the process holding it,
   * which commits them in its own transaction with one WAL sync for all (default `true`): group
   * commit across processes. Each append is applied once, in call order per process; a receipt
   * in the table `hermes_write_receipts`, written in the same transaction, tells its owner.
   * `false`: each process commits its own writes.
   */
  shareCommits?: boolean;
  /**
   * When to build the short-CJK side index (one- and two-character CJK terms), which is built on
   * a worker thread while searches scan: `lazy` (default) on the first such search, `eager` as
   * soon as the store opens, `off` never (an index already current in the file is still used).
   * Its state is `stats().sideIndexes.cjk`. A read-only store never builds it.
   */
  cjkIndex?: CjkIndexMode;
  /** Progress of a long upgrade (an old file's search index backfill). */
  onMigrationProgress?: (progress: MigrationProgress) => void;
  /**
   * How long opening waits, in ms, while another process upgrades the same old file
   * (default 600 000: re-indexing a million messages takes minutes), then `STORE_BUSY`.
   */
  migrationDeadlineMs?: number;
  /**
   * Open even when the SQLite linked into better-sqlite3 is older than 3.51.3 (which has a
   * WAL-reset bug that can corrupt a database written by several processes). Default `false`:
   * such a SQLite is refused with `UNSUPPORTED_SQLITE`.
   */
  allowUnsupportedSqlite?: boolean;
  /**
   * Worker threads that run this store's reads (searches, listings, messages, exports and
   * iterators, counts, stats, lineage), each with its own read-only connection to the file, so
   * that a long query never blocks this thread (default `min(availableParallelism(), 4)`).
   * Workers start on demand (the first once reads here took 20 ms in all; all at open with
   * `warmReaders`); until one is ready, reads run on this thread. `0`: every
   * read runs on this thread. A read-only store has workers when SQLite shares the file with it
   * (`access.readOnlyAccess` `shared`), and reads on this thread from a snapshot. See the README.
   */
  readers?: number;
  /**
   * `true`: start all `readers` workers while opening, and resolve once they are ready (a few
   * hundred ms of CPU, on their own threads), so that no read of a server runs on its thread
   * while the first worker loads. Default `false`: workers start on demand. No effect when the
   * store has no pool (`readers: 0`, a read-only store reading a snapshot).
   */
  warmReaders?: boolean;
  /**
   * Where this store's writes run. `"thread"`: on a writer thread that holds the store's only
   * writable connection (started while opening), so that no write transaction, COMMIT (its
   * fsync) or short-CJK index catch-up runs on the caller's thread; every write resolves after
   * its COMMIT there, and any later read sees it. `"auto"`: on the caller's thread until it has
   * committed a few transactions (8) while the store reads in its read pool, then on a writer
   * thread started then (a command that writes a little, and a process that only writes, keep
   * their writes here: the thread adds 0.1–0.4 ms to each write). This is the default.
   * `"inline"`: always on the caller's thread.
   * See the package README ("Writes on a writer thread") for what stays on the caller's side.
   */
  writer?: WriterMode;
  /**
   * Clock in Unix epoch seconds; for tests. With `writer: "thread"` the writer asks the
   * caller's thread for each reading and waits for it (inside its transaction).
   */
  clock?: () => number;
}

/** Where a store's writes run (the `writer` option of {@link openSessionStore}). */
export type WriterMode = "inline" | "thread" | "auto";

const MIGRATION_CHAIN = composeChain(coreSchema, searchSchema);
const CJK_INDEX_MODES: readonly unknown[] = ["lazy", "eager", "off"];
const WRITER_MODES: readonly unknown[] = ["inline", "thread", "auto"];
const DEFAULT_MIGRATION_DEADLINE_MS = 600_000;

/** An optional positive integer option, or `INVALID_ARGUMENT`. */
function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new InvalidArgumentError(name, `${name} must be a positive integer`);
  }
  return value;
}

/** The `readers` option: a non-negative integer, default `min(availableParallelism(), 4)`. */
function readersOption(value: number | undefined): number {
  if (value === undefined) return Math.min(availableParallelism(), 4);
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 64) {
    throw new InvalidArgumentError("readers", "readers must be an integer from 0 to 64");
  }
  return value;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Opens (creating when missing) a `state.db` and brings it to schema v11.
 *
 * @example
 * const store = await openSessionStore();              // ~/.hermes/state.db
 * const id = await store.createSession({ id: "s1", source: "cli" });
 * await store.appendMessage({ sessionId: id, role: "user", content: "hello" });
 * await store.close();
 */
export async function openSessionStore(
  optionsOrPath: OpenSessionStoreOptions | string = {},
): Promise<SessionStore> {
  const store = await openWithoutWorkers(optionsOrPath);
  if (typeof optionsOrPath === "object" && optionsOrPath.warmReaders === true) {
    const pool = store.readPool;
    await pool?.warmUp(pool.size);
  }
  return store;
}

/** {@link openSessionStore} up to the store, before any read worker runs. */
async function openWithoutWorkers(optionsOrPath: OpenSessionStoreOptions | string): Promise<SessionStore> {
  const options = typeof optionsOrPath === "string" ? { path: optionsOrPath } : optionsOrPath;
  if (typeof options !== "object" || options === null) {
    throw new InvalidArgumentError("options", "openSessionStore options must be an object or a path");
  }
  const path = options.path ?? resolveStatePath();
  if (typeof path !== "string" || path.length === 0) {
    throw new InvalidArgumentError("path", "path must be a non-empty string");
  }
  const deadlineMs = options.writeDeadlineMs ?? DEFAULT_WRITE_POLICY.deadlineMs;
  if (!Number.isFinite(deadlineMs) || deadlineMs < 0) {
    throw new InvalidArgumentError("writeDeadlineMs", "writeDeadlineMs must be a non-negative number");
  }
  const migrationDeadlineMs = options.migrationDeadlineMs ?? DEFAULT_MIGRATION_DEADLINE_MS;
  if (!Number.isFinite(migrationDeadlineMs) || migrationDeadlineMs < 0) {
    throw new InvalidArgumentError(
      "migrationDeadlineMs",
      "migrationDeadlineMs must be a non-negative number",
    );
  }
  const maxGroupSize = positiveInteger(
    "maxGroupSize",
    options.maxGroupSize,
    DEFAULT_WRITE_POLICY.maxGroupSize,
  );
  const walMaxBytes = positiveInteger("walMaxBytes", options.walMaxBytes, DEFAULT_WRITE_POLICY.walMaxBytes);
  if (options.readOnly !== undefined && typeof options.readOnly !== "boolean") {
    throw new InvalidArgumentError("readOnly", "readOnly must be a boolean");
  }
  positiveInteger("readOnlySnapshotMaxBytes", options.readOnlySnapshotMaxBytes, 1);
  const cjkIndex = options.cjkIndex ?? "lazy";
  if (!CJK_INDEX_MODES.includes(cjkIndex)) {
    throw new InvalidArgumentError("cjkIndex", 'cjkIndex must be "lazy", "eager" or "off"');
  }
  const readers = readersOption(options.readers);
  if (options.warmReaders !== undefined && typeof options.warmReaders !== "boolean") {
    throw new InvalidArgumentError("warmReaders", "warmReaders must be a boolean");
  }
  const writer = options.writer ?? "auto";
  if (!WRITER_MODES.includes(writer)) {
    throw new InvalidArgumentError("writer", 'writer must be "inline", "thread" or "auto"');
  }
  if (options.clock !== undefined && typeof options.clock !== "function") {
    throw new InvalidArgumentError("clock", "clock must be a function");
  }
  refuseSymlinks(path);
  if (options.readOnly === true) {
    if (!(await preflightDatabaseFile(path))) {
      throw new StoreReadOnlyError(
        path,
        "there is no database there, and a read-only open creates nothing",
        "A read-only open",
      );
    }
    return openReadOnlyStore(path, { kind: "requested" }, options);
  }
  // An existing file this process cannot write (another user's folder, a read-only mount) is
  // read, not refused: SQLite would fail on its first write with "attempt to write a readonly database".
  if (existsSync(path) && (await preflightDatabaseFile(path))) {
    const blocker = writeBlocker(path);
    if (blocker !== null) {
      if (options.readOnly === false)
        throw new StoreReadOnlyError(path, blocker, "A writable open (readOnly: false)");
      return openReadOnlyStore(path, { kind: "unwritable", reason: blocker }, options);
    }
  }
  ensureParentDirectory(path);
  const pragmas = {
    busyTimeoutMs: options.busyTimeoutMs ?? 5,
    synchronous: options.synchronous ?? "FULL",
    journalSizeLimit: options.journalSizeLimit ?? 16 * 1024 * 1024,
    readOnly: false,
  } as const;

  // A new file is built under a temporary name and linked into place whole (see
  // createDatabaseAtomically); an existing one is checked before SQLite may write to it.
  let created: MigrationReport | undefined;
  if (!(await preflightDatabaseFile(path))) {
    created = await createDatabaseAtomically(path, async (temp) => {
      let fresh: DatabaseConnection;
      try {
        fresh = new DatabaseConnection(temp, pragmas);
      } catch (error) {
        throw mapSqliteError(error, path);
      }
      try {
        checkSqliteVersion(fresh, options.allowUnsupportedSqlite === true);
        fresh.db.pragma("journal_mode = WAL");
        const queue = new WriteQueue(fresh, { ...DEFAULT_WRITE_POLICY, deadlineMs });
        return await runMigrations(fresh, MIGRATION_CHAIN, {
          transaction: (label, fn) => queue.run(label, fn),
          onProgress: options.onMigrationProgress,
        });
      } finally {
        fresh.close();
      }
    });
  }

  let conn: DatabaseConnection;
  let writePath: WritePath | undefined;
  let thread: WriterThread | undefined;
  try {
    conn = new DatabaseConnection(path, pragmas);
  } catch (error) {
    throw mapSqliteError(error, path);
  }
  // Before anything that writes (mode, journal mode, sidecar folder, upgrade): a newer agent's
  // file is read with its rules and never written.
  const newer = newerSchemaVersion(conn);
  if (newer !== null) {
    if (options.readOnly === false) {
      throw new SchemaNewerError(path, newer, SCHEMA_VERSION, "A writable open (readOnly: false)");
    }
    return openReadOnlyStore(path, { kind: "newer", fileVersion: newer }, options);
  }
  try {
    verifyOpenedDatabase(conn);
    const sqliteVersion = checkSqliteVersion(conn, options.allowUnsupportedSqlite === true);
    tightenPermissions(path);
    await setWalMode(conn, deadlineMs);
    const settings: WritePathSettings = {
      path,
      pragmas,
      policy: {
        deadlineMs,
        checkpointEvery: options.checkpointEvery ?? DEFAULT_WRITE_POLICY.checkpointEvery,
        maxGroupSize,
        walMaxBytes,
      },
      fairWrites: options.fairWrites !== false,
      shareCommits: options.shareCommits !== false,
    };
    // With a writer thread, this connection only reads once the file is upgraded: the writer
    // holds the write path (its queue, the writers' queue, shared commits, the checkpoints).
    writePath = writer === "thread" ? undefined : openWritePath(conn, settings);
    // Upgrading a big old file holds the write lock for minutes (a million messages
    // re-indexed); a process opening the same file meanwhile waits for it instead of failing.
    const upgrades = new WriteQueue(conn, {
      ...DEFAULT_WRITE_POLICY,
      deadlineMs: migrationDeadlineMs,
    });
    const migration = await runMigrations(conn, MIGRATION_CHAIN, {
      transaction: (label, fn) => upgrades.run(label, fn),
      onProgress: options.onMigrationProgress,
    });
    tightenPermissions(path);
    // SQLite would otherwise checkpoint inside every COMMIT once the WAL passes 1,000 pages (on
    // every commit while readers hold it), before the next writer gets the lock: the write path
    // runs them after handing the lock on instead.
    conn.db.pragma("wal_autocheckpoint = 0");
    const spawn = () => new WriterThread({ settings, cjk: { mode: cjkIndex, pragmas } }, options.clock);
    if (writer === "thread") {
      thread = spawn();
      await thread.start();
    }
    return new SessionStore({
      conn,
      // With a writer thread from the start, this side's queue commits nothing (it only reads).
      writes: writePath?.writes ?? new WriteQueue(conn, { ...DEFAULT_WRITE_POLICY, deadlineMs }),
      migration: created ?? migration,
      clock: options.clock ?? (() => Date.now() / 1000),
      sqliteVersion,
      writePath,
      writer: thread,
      spawnWriter: writer === "auto" ? spawn : undefined,
      // The process writes files anyway: its readers' sorts may spill to temporary ones (faster).
      pool: readers === 0 ? undefined : new ReadPool(path, readers, { tempFiles: true }),
      cjk: { path, pragmas, deadlineMs, fairWrites: settings.fairWrites, mode: cjkIndex },
    });
  } catch (error) {
    await thread?.close();
    writePath?.turns?.close();
    conn.close();
    throw mapSqliteError(error, path);
  }
}

/** A store that reads an existing file and writes nothing (see `open-read-only-store.ts`). */
function openReadOnlyStore(
  path: string,
  cause: ReadOnlyCause,
  options: OpenSessionStoreOptions,
): SessionStore {
  const { state, writes, report } = openReadOnlyParts(path, cause, options);
  const clock = options.clock ?? (() => Date.now() / 1000);
  const sqliteVersion = String(state.file.conn.db.prepare("SELECT sqlite_version() AS v").pluck().get());
  // Workers read the same file the same way when SQLite shares it (not an in-memory snapshot).
  const readers = readersOption(options.readers);
  const pool = readers > 0 && state.file.access === "shared" ? new ReadPool(path, readers) : undefined;
  return new SessionStore({
    conn: state.file.conn,
    writes,
    migration: report,
    clock,
    sqliteVersion,
    readOnly: state,
    pool,
  });
}

/** Refuses a SQLite older than {@link MIN_SQLITE_VERSION} unless allowed. */
function checkSqliteVersion(conn: DatabaseConnection, allow: boolean): string {
  const version = String(conn.db.prepare("SELECT sqlite_version() AS v").pluck().get());
  if (!allow && !isSupportedSqliteVersion(version)) {
    throw new HermesStoreError(
      "UNSUPPORTED_SQLITE",
      `SQLite ${version} is older than ${MIN_SQLITE_VERSION}, which fixes a WAL-reset bug that can ` +
        "corrupt a database shared by several processes. Upgrade better-sqlite3, or pass " +
        "allowUnsupportedSqlite: true to accept the risk.",
    );
  }
  return version;
}

/** Switches to WAL, waiting on timers while another connection holds the lock. */
async function setWalMode(conn: DatabaseConnection, deadlineMs: number): Promise<void> {
  const started = performance.now();
  for (let backoff = 1; ; backoff = Math.min(backoff * 2, 50)) {
    try {
      const mode = conn.db.pragma("journal_mode = WAL", { simple: true });
      if (String(mode).toLowerCase() !== "wal") {
        throw new BackendError(`Could not switch ${conn.path} to WAL mode (journal_mode is ${String(mode)})`);
      }
      return;
    } catch (error) {
      if (!isBusyError(error) || performance.now() - started > deadlineMs) throw error;
      await sleep(backoff / 2 + Math.random() * (backoff / 2));
    }
  }
}
