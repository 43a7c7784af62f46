// Opening a state.db: options checked, a new file created atomically, the SQLite version and WAL
// mode checked, the migrations run, and the write path (queue, writers' turns, shared commits) set up.
import { BackendError, HermesStoreError, InvalidArgumentError } from "@hermes/core";
import {
  composeChain,
  coreSchema,
  type MigrationProgress,
  type MigrationReport,
  runMigrations,
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
import { SessionStore, walSize } from "./session-store.js";
import { isBusyError, mapSqliteError } from "./sqlite-errors.js";
import { resolveStatePath } from "./state-path.js";
import { HandoffQueue } from "./write/handoff-queue.js";
import { referenceSearchIndexRepair } from "./write/search-index-repair.js";
import { referenceSearchMergePacing } from "./write/search-merge-pacing.js";
import { SharedCommits } from "./write/shared-commits.js";
import { DEFAULT_WRITE_POLICY } from "./write/write-policy.js";
import { WriteQueue } from "./write/write-queue.js";

/** Options of {@link openSessionStore}. */
export interface OpenSessionStoreOptions {
  /** Database file; default `resolveStatePath()`. The parent directory is created (0700). */
  path?: string;
  /** Total patience of one write under contention, in ms (default 30 000), then `STORE_BUSY`. */
  writeDeadlineMs?: number;
  /**
   * SQLite's own busy handler, in ms (default 5). Kept short because better-sqlite3 waits
   * synchronously, freezing the event loop; longer waits happen between attempts, on timers.
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
  /** Clock in Unix epoch seconds; for tests. */
  clock?: () => number;
}

const MIGRATION_CHAIN = composeChain(coreSchema, searchSchema);
const DEFAULT_MIGRATION_DEADLINE_MS = 600_000;

/** An optional positive integer option, or `INVALID_ARGUMENT`. */
function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new InvalidArgumentError(name, `${name} must be a positive integer`);
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
export async function openSessionStore(options: OpenSessionStoreOptions = {}): Promise<SessionStore> {
  if (typeof options !== "object" || options === null) {
    throw new InvalidArgumentError("options", "openSessionStore options must be an object");
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
  refuseSymlinks(path);
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
  let turns: HandoffQueue | undefined;
  try {
    conn = new DatabaseConnection(path, pragmas);
  } catch (error) {
    throw mapSqliteError(error, path);
  }
  try {
    verifyOpenedDatabase(conn);
    const sqliteVersion = checkSqliteVersion(conn, options.allowUnsupportedSqlite === true);
    tightenPermissions(path);
    await setWalMode(conn, deadlineMs);
    turns = options.fairWrites === false ? undefined : HandoffQueue.open(path);
    const shared =
      turns === undefined || options.shareCommits === false ? undefined : new SharedCommits(turns, conn);
    const writes = new WriteQueue(
      conn,
      {
        ...DEFAULT_WRITE_POLICY,
        deadlineMs,
        checkpointEvery: options.checkpointEvery ?? DEFAULT_WRITE_POLICY.checkpointEvery,
        maxGroupSize,
        walMaxBytes,
      },
      () => walSize(path),
      referenceSearchIndexRepair(conn),
      turns,
      shared,
      referenceSearchMergePacing(conn),
    );
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
    return new SessionStore(
      conn,
      writes,
      created ?? migration,
      options.clock ?? (() => Date.now() / 1000),
      sqliteVersion,
      turns,
      shared,
    );
  } catch (error) {
    turns?.close();
    conn.close();
    throw mapSqliteError(error, path);
  }
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
