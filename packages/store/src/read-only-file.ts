import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
} from "node:fs";
import { dirname } from "node:path";
import { HermesStoreError } from "@hermes/core";
import type Database from "better-sqlite3";
import { DatabaseConnection } from "./database-connection.js";
import { type FileProfile, readFileProfile } from "./file-profile.js";
import { installFileViews, type ProfileReads, profileReads } from "./file-views.js";
import { mapSqliteError, sqliteCode } from "./sqlite-errors.js";

/**
 * How a read-only store reads its file:
 * - `shared`: a SQLite read-only connection (`SQLITE_OPEN_READONLY`), which sees every commit
 *   of other processes as they land. In WAL mode it uses the `-wal`/`-shm` files that the
 *   writers keep; it never creates one that does not exist already, except a missing `-shm`
 *   beside an existing `-wal`, which SQLite needs to read the WAL at all.
 * - `snapshot`: the file read into memory once (what SQLite's `immutable=1` would do, which
 *   better-sqlite3 cannot ask for), used for a WAL-mode file that no process has open (no
 *   `-wal`: everything is in the main file), where a read-only connection would leave new
 *   `-wal`/`-shm` files behind, or cannot open at all in a folder it cannot write. The copy is
 *   taken between two identical `stat`s with no `-wal` in sight, so no writer touched it;
 *   before each read the store checks that this still holds and reads again when it does
 *   not. Risk while a writer is active: none of its commits are seen until the next read
 *   notices the `-wal`; a snapshot of a file whose `-wal` could not be read (another user's,
 *   in a folder we cannot write) misses the commits that are still in it.
 */
export type ReadOnlyAccess = "shared" | "snapshot";

/** Options of {@link ReadOnlyFile.open}. */
export interface ReadOnlyFileOptions {
  /** SQLite's busy handler for reads, in ms (a rollback-journal writer blocks readers while it commits). */
  busyTimeoutMs: number;
  /**
   * Largest file read into memory for a `snapshot` in a folder this process can write; a larger
   * one is read through a `shared` connection, which leaves empty `-wal`/`-shm` files behind.
   * In a folder it cannot write, a snapshot is the only way and is taken whatever the size.
   */
  snapshotMaxBytes: number;
  /** Install the views of a newer layout (`file-views.ts`); `false` reads the file as it is. */
  views: boolean;
  /**
   * Let sorts use temporary files in the system's temp folder (SQLite's default) instead of
   * memory: for the read workers of a writable store, whose process writes files anyway. A
   * read-only store leaves it off, so that it creates no file anywhere.
   */
  tempFiles?: boolean;
}

const HEADER = Buffer.from("SQLite format 3\0", "latin1");

interface Stamp {
  ino: number;
  size: number;
  mtimeNs: bigint;
}

function stampOf(path: string): Stamp {
  const st = statSync(path, { bigint: true });
  return { ino: Number(st.ino), size: Number(st.size), mtimeNs: st.mtimeNs };
}

const sameStamp = (a: Stamp, b: Stamp) => a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;

/**
 * Files this process reads through a `ReadOnlyFile`, by device and inode, with their journal
 * mode. Reading a header opens and closes a descriptor of the file, and closing any descriptor
 * drops every POSIX lock this process holds on it: a rollback-journal file one of our readers
 * has open (an export holds its read lock across awaits) is never read that way.
 */
const openHere = new Map<string, { count: number; wal: boolean }>();

function inodeKey(path: string): string {
  const st = statSync(path, { bigint: true });
  return `${st.dev}:${st.ino}`;
}

/** The journal mode the header records (bytes 18/19: 1 rollback, 2 WAL), or `null` when it is not a SQLite header. */
function headerSaysWal(path: string): boolean | null {
  const header = Buffer.alloc(100);
  const fd = openSync(path, "r");
  let read: number;
  try {
    read = readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  if (read < 100 || !header.subarray(0, 16).equals(HEADER)) return null;
  return header[18] === 2 || header[19] === 2;
}

function writableDir(path: string): boolean {
  try {
    accessSync(dirname(path), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** What reading a file in memory found. */
type Image = { bytes: Buffer; stamp: Stamp } | "wal-appeared";

/**
 * The whole file, read between two identical stats with no `-wal` (unless `beside` an existing
 * WAL that cannot be read), or a sign that a writer is there.
 */
function readImage(path: string, besideWal = false): Image {
  const walAppeared = () => !besideWal && existsSync(`${path}-wal`);
  for (let attempt = 0; attempt < 5; attempt++) {
    if (walAppeared()) return "wal-appeared";
    const before = stampOf(path);
    const bytes = readFileSync(path);
    const after = stampOf(path);
    if (walAppeared()) return "wal-appeared";
    if (sameStamp(before, after) && bytes.length === after.size) {
      // In memory there is no WAL: the header must say "rollback journal" for SQLite to open it.
      bytes[18] = 1;
      bytes[19] = 1;
      return { bytes, stamp: after };
    }
  }
  throw new HermesStoreError(
    "STORE_BUSY",
    `${path} kept changing while it was read (a writer without a WAL); retry the read-only open.`,
  );
}

function connect(path: string, busyTimeoutMs: number, image?: Buffer): DatabaseConnection {
  return new DatabaseConnection(path, {
    busyTimeoutMs,
    synchronous: "FULL",
    journalSizeLimit: 0,
    readOnly: true,
    ...(image === undefined ? {} : { image }),
  });
}

/** A first read, so that a connection that cannot read its WAL fails here and not later. */
function probe(conn: DatabaseConnection): void {
  conn.db.pragma("schema_version", { simple: true });
}

/** Errors of a `shared` open that a `snapshot` can get past (the WAL index cannot be opened or built). */
function snapshotCanHelp(error: unknown): boolean {
  const code = sqliteCode(error) ?? "";
  return code.startsWith("SQLITE_CANTOPEN") || code.startsWith("SQLITE_READONLY");
}

interface Opened {
  conn: DatabaseConnection;
  access: ReadOnlyAccess;
  note: string | null;
  stamp: Stamp | null;
  wal: boolean;
}

/** One reading of a file: the connection, its access, its profile and the SQL of its layout. */
interface Generation extends Opened {
  profile: FileProfile;
  reads: ProfileReads | null;
  leases: number;
  retired: boolean;
}

/**
 * A database file read without writing anything: no file created (no `-wal`/`-shm` it does not
 * need, no sidecar folder, no temporary file), no mode changed, no journal mode switched.
 * See {@link ReadOnlyAccess} for how it reads.
 */
export class ReadOnlyFile {
  readonly path: string;
  readonly #options: ReadOnlyFileOptions;
  readonly #key: string;
  #current: Generation;
  #generations = 0;
  #closed = false;

  private constructor(path: string, options: ReadOnlyFileOptions, key: string, first: Generation) {
    this.path = path;
    this.#options = options;
    this.#key = key;
    this.#current = first;
  }

  /** Opens `path` (which must exist) read-only. */
  static open(path: string, options: ReadOnlyFileOptions): ReadOnlyFile {
    const key = inodeKey(path);
    const first = ReadOnlyFile.#generation(path, options, key);
    const entry = openHere.get(key);
    openHere.set(key, { count: (entry?.count ?? 0) + 1, wal: first.wal });
    return new ReadOnlyFile(path, options, key, first);
  }

  static #choose(path: string, options: ReadOnlyFileOptions, key: string): Opened {
    const known = openHere.get(key);
    // A `-wal` means a WAL file some process has (or had) open: SQLite reads it, sharing it.
    let wal: boolean | null = existsSync(`${path}-wal`) ? true : (known?.wal ?? null);
    if (wal === null && known === undefined) wal = headerSaysWal(path);
    if (wal !== true || existsSync(`${path}-wal`)) {
      return ReadOnlyFile.#shared(path, options, wal === true);
    }
    const roomy = writableDir(path);
    if (roomy && statSync(path).size > options.snapshotMaxBytes) {
      return {
        ...ReadOnlyFile.#shared(path, options, true),
        note: `the file is larger than snapshotMaxBytes, so SQLite's read-only connection created ${path}-wal and -shm (left empty)`,
      };
    }
    const image = readImage(path);
    if (image === "wal-appeared") return ReadOnlyFile.#shared(path, options, true);
    return ReadOnlyFile.#snapshot(path, options, image, null);
  }

  static #snapshot(
    path: string,
    options: ReadOnlyFileOptions,
    image: { bytes: Buffer; stamp: Stamp },
    note: string | null,
  ): Opened {
    const conn = connect(path, options.busyTimeoutMs, image.bytes);
    return { conn, access: "snapshot", note, stamp: image.stamp, wal: true };
  }

  static #shared(path: string, options: ReadOnlyFileOptions, wal: boolean): Opened {
    let conn: DatabaseConnection | undefined;
    try {
      conn = connect(path, options.busyTimeoutMs);
      probe(conn);
      return { conn, access: "shared", note: null, stamp: null, wal };
    } catch (error) {
      conn?.close();
      if (!wal || !snapshotCanHelp(error)) throw mapSqliteError(error, path);
      // Another user's WAL in a folder this process cannot write: the main file is all it can read.
      const besideWal = existsSync(`${path}-wal`);
      const image = readImage(path, true) as { bytes: Buffer; stamp: Stamp };
      const note = besideWal
        ? `its WAL (${path}-wal) could not be read (${sqliteCode(error)}): commits still in it are not visible`
        : null;
      return ReadOnlyFile.#snapshot(path, options, image, note);
    }
  }

  static #generation(path: string, options: ReadOnlyFileOptions, key: string): Generation {
    const opened = ReadOnlyFile.#choose(path, options, key);
    try {
      const profile = readFileProfile(opened.conn, opened.access === "snapshot" ? "wal" : undefined);
      if (options.views) installFileViews(opened.conn, profile, options.tempFiles);
      return {
        ...opened,
        profile,
        reads: options.views ? profileReads(profile) : null,
        leases: 0,
        retired: false,
      };
    } catch (error) {
      opened.conn.close();
      throw mapSqliteError(error, path);
    }
  }

  /**
   * How many times {@link refresh} read the file again: a new connection, whose `data_version`
   * starts afresh, so a change check compares this count too.
   */
  get generation(): number {
    return this.#generations;
  }

  /** The connection reads go through now. */
  get conn(): DatabaseConnection {
    return this.#current.conn;
  }
  /** The raw better-sqlite3 handle of {@link conn}. */
  get db(): Database.Database {
    return this.#current.conn.db;
  }
  get access(): ReadOnlyAccess {
    return this.#current.access;
  }
  /** Something a user should know about how the file is read (what is not visible), or `null`. */
  get note(): string | null {
    return this.#current.note;
  }
  get profile(): FileProfile {
    return this.#current.profile;
  }
  get reads(): ProfileReads | null {
    return this.#current.reads;
  }

  /**
   * For a `snapshot`: reads the file again when it changed since (a `-wal` appeared, or its
   * size, time or inode moved), so a long-lived reader follows a writer that started later.
   * A `shared` connection follows writers by itself. Cheap: two `stat`s.
   */
  refresh(): void {
    const g = this.#current;
    if (this.#closed || g.access !== "snapshot" || g.stamp === null) return;
    let changed: boolean;
    try {
      // A snapshot taken beside a WAL it could not read (see #shared) always has one: only a
      // change of the main file (a checkpoint) tells it something new landed.
      const walAppeared = g.note === null && existsSync(`${this.path}-wal`);
      changed = walAppeared || !sameStamp(g.stamp, stampOf(this.path));
    } catch {
      return; // Gone or unreadable now: keep answering from the copy; the next open will say why.
    }
    if (!changed) return;
    const next = ReadOnlyFile.#generation(this.path, this.#options, this.#key);
    this.#current = next;
    this.#generations++;
    const entry = openHere.get(this.#key);
    if (entry !== undefined) entry.wal = next.wal;
    this.#retire(g);
  }

  /**
   * A connection on the same view of the file for a read that spans awaits (an export's read
   * transaction): a new read-only connection when `shared`, the snapshot itself otherwise.
   * Call `release` when done. `own`: the connection is the caller's alone (it may hold a
   * transaction); a snapshot is shared, and needs none (it never changes).
   */
  reader(): { conn: DatabaseConnection; own: boolean; release: () => void } {
    const g = this.#current;
    if (g.access === "snapshot") {
      g.leases++;
      return {
        conn: g.conn,
        own: false,
        release: () => {
          g.leases--;
          if (g.retired) this.#retire(g);
        },
      };
    }
    const conn = connect(this.path, this.#options.busyTimeoutMs);
    try {
      if (this.#options.views) installFileViews(conn, g.profile, this.#options.tempFiles);
    } catch (error) {
      conn.close();
      throw mapSqliteError(error, this.path);
    }
    return { conn, own: true, release: () => conn.close() };
  }

  #retire(g: Generation): void {
    g.retired = true;
    if (g.leases === 0) g.conn.close();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#retire(this.#current);
    const entry = openHere.get(this.#key);
    if (entry !== undefined && --entry.count <= 0) openHere.delete(this.#key);
  }
}

/** A database file open for reading only, as {@link openReadOnlyDatabase} returns it. */
export interface ReadOnlyDatabase {
  /** The better-sqlite3 handle (read-only: every write statement fails with `SQLITE_READONLY`). */
  readonly db: Database.Database;
  readonly path: string;
  readonly access: ReadOnlyAccess;
  /** What is not visible through this handle (see {@link ReadOnlyAccess}), or `null`. */
  readonly note: string | null;
  /** What the file holds: schema version, journal mode, columns, newer agents' features. */
  readonly profile: FileProfile;
  close(): void;
}

/**
 * Opens an existing database file for raw read-only SQL, leaving no trace (see
 * {@link ReadOnlyAccess}): for tools that inspect a file as it is (integrity checks, counts).
 * Tables are the file's own; use `openSessionStore({ readOnly: true })` for the agent's view
 * of its sessions.
 *
 * @example
 * const file = openReadOnlyDatabase("/home/ada/.hermes/state.db")
 * try { console.log(file.profile.schemaVersion, file.db.pragma("integrity_check")) } finally { file.close() }
 */
export function openReadOnlyDatabase(
  path: string,
  o: { busyTimeoutMs?: number; snapshotMaxBytes?: number } = {},
): ReadOnlyDatabase {
  if (!existsSync(path)) {
    throw new HermesStoreError(
      "STORE_READ_ONLY",
      `There is no database at ${path}; a read-only open creates nothing.`,
    );
  }
  return ReadOnlyFile.open(path, {
    busyTimeoutMs: o.busyTimeoutMs ?? 1_000,
    snapshotMaxBytes: o.snapshotMaxBytes ?? 256 * 1024 * 1024,
    views: false,
  });
}
