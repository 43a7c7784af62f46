import { accessSync, constants, existsSync } from "node:fs";
import { dirname } from "node:path";
import { type HermesStoreError, SchemaNewerError, StoreReadOnlyError } from "@hermes/core";
import { type MigrationReport, readSchemaVersion, SCHEMA_VERSION } from "@hermes/schema";
import type { DatabaseConnection } from "./database-connection.js";
import { type ReadOnlyAccess, ReadOnlyFile, type ReadOnlyFileOptions } from "./read-only-file.js";
import { mapSqliteError } from "./sqlite-errors.js";
import type { StoreContext } from "./store-context.js";
import { DEFAULT_WRITE_POLICY } from "./write/write-policy.js";
import { WriteQueue } from "./write/write-queue.js";
import { writeOperationName } from "./write-operation-names.js";

/** Why a store opened read-only: asked for, a newer agent's file, or a file it cannot write. */
export type ReadOnlyCause =
  | { kind: "requested" }
  | { kind: "newer"; fileVersion: number }
  | { kind: "unwritable"; reason: string };

/** What a read-only {@link SessionStore} holds besides the usual. */
export interface ReadOnlyStoreState {
  readonly file: ReadOnlyFile;
  readonly cause: ReadOnlyCause;
  /** The error every write rejects with; `action` is the write method's name (see `writeOperationName`). */
  refusal(action: string): HermesStoreError;
}

/** Default largest file read into memory for a read-only snapshot (see `ReadOnlyFile`). */
export const DEFAULT_SNAPSHOT_MAX_BYTES = 256 * 1024 * 1024;
/**
 * Default busy handler of a read-only store, in ms. A reader of a rollback-journal file (a
 * newer agent keeps its file out of WAL where SQLite has the WAL-reset bug) waits while the
 * agent commits; in WAL mode readers never wait.
 */
export const DEFAULT_READ_ONLY_BUSY_MS = 1_000;

/**
 * Why this process cannot write `path` (the file, a sidecar or the folder: permission or a
 * read-only file system), or `null`. Checked with access(2), which answers for this process's
 * user (root writes almost anywhere, but not on a read-only mount). Exported as
 * `whyNotWritable`: a default open of such a file is read-only for this reason.
 */
export function writeBlocker(path: string): string | null {
  const targets = [path, `${path}-wal`, `${path}-shm`].filter((p) => existsSync(p));
  targets.push(dirname(path));
  for (const target of targets) {
    try {
      accessSync(target, constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EROFS") return `${target} is on a read-only file system`;
      return target === dirname(path)
        ? `this process cannot write the folder ${target} (${code}), where SQLite keeps its journal`
        : `this process cannot write ${target} (${code})`;
    }
  }
  return null;
}

/** The words of a cause, for `readOnlyReason` and the refusals. */
export function causeText(cause: ReadOnlyCause): string {
  switch (cause.kind) {
    case "requested":
      return "it was opened with readOnly: true";
    case "newer":
      return `the file has schema version ${cause.fileVersion}, written by a newer Hermes Agent (this store writes version ${SCHEMA_VERSION})`;
    case "unwritable":
      return cause.reason;
  }
}

/** Opens the read-only state of a store on an existing file. */
export function openReadOnlyState(
  path: string,
  cause: ReadOnlyCause,
  o: Partial<ReadOnlyFileOptions>,
): ReadOnlyStoreState {
  const file = ReadOnlyFile.open(path, {
    busyTimeoutMs: o.busyTimeoutMs ?? DEFAULT_READ_ONLY_BUSY_MS,
    snapshotMaxBytes: o.snapshotMaxBytes ?? DEFAULT_SNAPSHOT_MAX_BYTES,
    views: true,
    ...(o.tempFiles === undefined ? {} : { tempFiles: o.tempFiles }),
  });
  // A file found newer only now (the caller asked for read-only, or could not write) refuses
  // writes as newer: that is the reason that would remain once the others are gone.
  const version = file.profile.schemaVersion;
  const effective: ReadOnlyCause =
    cause.kind !== "newer" && version !== null && version > SCHEMA_VERSION && cause.kind !== "requested"
      ? { kind: "newer", fileVersion: version }
      : cause;
  return {
    file,
    cause: effective,
    refusal(action) {
      if (effective.kind === "newer") {
        return new SchemaNewerError(path, effective.fileVersion, SCHEMA_VERSION, writeOperationName(action));
      }
      return new StoreReadOnlyError(
        path,
        causeText(effective),
        `${writeOperationName(action)} is refused: this store`,
      );
    },
  };
}

/**
 * The file's `schema_version` when it is above ours, else `null`; closes `conn` when it returns
 * a version (or fails), so that a newer file is left exactly as it was. Read through the
 * writable connection before anything writes (mode, journal mode, sidecar folder, upgrade).
 */
export function newerSchemaVersion(conn: DatabaseConnection): number | null {
  try {
    const version = readSchemaVersion(conn);
    if (version === null || version <= SCHEMA_VERSION) return null;
    conn.close();
    return version;
  } catch (error) {
    conn.close();
    throw mapSqliteError(error, conn.path);
  }
}

/** What a read-only store is made of: its file, a write queue never given a write, its open report. */
export function openReadOnlyParts(
  path: string,
  cause: ReadOnlyCause,
  o: { busyTimeoutMs?: number; readOnlySnapshotMaxBytes?: number; tempFiles?: boolean },
): { state: ReadOnlyStoreState; writes: WriteQueue; report: MigrationReport } {
  const state = openReadOnlyState(path, cause, {
    ...(o.tempFiles === undefined ? {} : { tempFiles: o.tempFiles }),
    ...(o.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: o.busyTimeoutMs }),
    ...(o.readOnlySnapshotMaxBytes === undefined ? {} : { snapshotMaxBytes: o.readOnlySnapshotMaxBytes }),
  });
  const version = state.file.profile.schemaVersion;
  const report: MigrationReport = {
    fromVersion: version,
    toVersion: version,
    applied: [],
    warnings: [],
    newerVersion: version !== null && version > SCHEMA_VERSION,
  };
  // Counters and error notes only: every write method refuses before reaching it.
  return { state, writes: new WriteQueue(state.file.conn, DEFAULT_WRITE_POLICY), report };
}

/**
 * The context operations get from a read-only store: always the file's current connection and
 * layout (a snapshot may be read again, see `ReadOnlyFile.refresh`).
 */
export function readOnlyContext(
  state: ReadOnlyStoreState,
  writes: WriteQueue,
  clock: () => number,
): StoreContext {
  const file = state.file;
  return {
    get conn() {
      return file.conn;
    },
    get reads() {
      return file.reads;
    },
    writes,
    path: file.path,
    now: clock,
    readOnly: {
      reader: () => file.reader(),
      get generation() {
        return file.generation;
      },
      refresh: () => {
        try {
          file.refresh();
        } catch (error) {
          throw mapSqliteError(error, file.path);
        }
      },
    },
  };
}

/** How a store reaches its file (see {@link SessionStore.access}). */
export interface StoreAccess {
  /** `read-write`, or `read-only` (every write rejects). */
  readonly mode: "read-write" | "read-only";
  /** Why writes are impossible, in words; `null` when the store writes. */
  readonly readOnlyReason: string | null;
  /**
   * Read-only stores: `shared` (a read-only SQLite connection, seeing other processes'
   * commits) or `snapshot` (the file read into memory; see the README); `null` when writable.
   */
  readonly readOnlyAccess: ReadOnlyAccess | null;
  /** What a reader should know about what it cannot see, or `null`. */
  readonly note: string | null;
  /** `schema_version` of the file (11 once a writable store has opened it). */
  readonly schemaVersion: number | null;
  /** The file's journal mode: `wal`, or `rollback` (left as it is by a read-only store). */
  readonly journalMode: "wal" | "rollback";
}

/** The {@link StoreAccess} of a store: read-write without a read-only state. */
export function storeAccess(state: ReadOnlyStoreState | undefined): StoreAccess {
  if (state === undefined) {
    return {
      mode: "read-write",
      readOnlyReason: null,
      readOnlyAccess: null,
      note: null,
      schemaVersion: SCHEMA_VERSION,
      journalMode: "wal",
    };
  }
  return {
    mode: "read-only",
    readOnlyReason: causeText(state.cause),
    readOnlyAccess: state.file.access,
    note: state.file.note,
    schemaVersion: state.file.profile.schemaVersion,
    journalMode: state.file.profile.journalMode,
  };
}
