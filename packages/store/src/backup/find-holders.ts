import { readdirSync, readFileSync, statSync } from "node:fs";
import Database from "better-sqlite3";
import { sqliteCode } from "../sqlite-errors.js";

/** A process found holding a database file, and the check that found it. */
export interface FileHolder {
  /** Its process id, when the check can tell (the SQLite lock probe cannot). */
  pid: number | null;
  /** Its command name (`/proc/PID/comm`), when readable. */
  command: string | null;
  /** `open descriptor (/proc/PID/fd)`, `POSIX lock (/proc/locks)` or `SQLite lock probe`. */
  check: string;
  /** The file it holds: the database or one of its `-wal`, `-shm`, `-journal`. */
  file: string;
}

/** The database and the files SQLite keeps beside it, in either journal mode. */
export function sqliteFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`, `${path}-journal`];
}

interface FileId {
  file: string;
  dev: bigint;
  ino: bigint;
}

function fileIds(path: string): FileId[] {
  const ids: FileId[] = [];
  for (const file of sqliteFiles(path)) {
    const st = statQuietly(file);
    if (st?.isFile()) ids.push({ file, dev: st.dev, ino: st.ino });
  }
  return ids;
}

/** `stat` that answers `undefined` for a path it may not see (gone, another user's, not permitted). */
function statQuietly(path: string) {
  try {
    return statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

function commandOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim() || null;
  } catch {
    return null;
  }
}

/**
 * Processes with a descriptor open on one of the files, by `stat` of `/proc/PID/fd/N` (which
 * follows the link without opening the file, so nobody's locks are touched). Sees the
 * processes of this user (others' are unreadable); `null` where there is no `/proc`.
 */
function descriptorHolders(ids: readonly FileId[]): FileHolder[] | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  const found: FileHolder[] = [];
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // another user's process, or gone
    }
    for (const fd of fds) {
      const st = statQuietly(`/proc/${pid}/fd/${fd}`);
      const id = st === undefined ? undefined : ids.find((i) => i.ino === st.ino && i.dev === st.dev);
      if (id !== undefined) {
        found.push({
          pid: Number(pid),
          command: commandOf(Number(pid)),
          check: `open descriptor (/proc/${pid}/fd)`,
          file: id.file,
        });
        break;
      }
    }
  }
  return found;
}

// Linux's encoding of dev_t (glibc's gnu_dev_major / gnu_dev_minor).
const major = (dev: bigint) => ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
const minor = (dev: bigint) => (dev & 0xffn) | ((dev >> 12n) & ~0xffn);

/**
 * Processes holding a POSIX lock on one of the files (`/proc/locks`): every WAL connection keeps
 * a read lock on the `-shm` for as long as it is open, and a rollback-journal reader or writer
 * locks the database while it works. Sees every user's locks; `null` where there is no `/proc`.
 */
function lockHolders(ids: readonly FileId[]): FileHolder[] | null {
  let text: string;
  try {
    text = readFileSync("/proc/locks", "utf8");
  } catch {
    return null;
  }
  const found = new Map<string, FileHolder>();
  for (const line of text.split("\n")) {
    // "1: POSIX  ADVISORY  READ 1234 fe:00:5662890 128 128" (blocked waiters start with "->").
    const m =
      /^\d+:\s+(?:->\s+)?(?:POSIX|OFDLCK|FLOCK)\s+\S+\s+\S+\s+(-?\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/.exec(
        line,
      );
    if (m === null) continue;
    const [, pidText, maj, min, ino] = m as unknown as [string, string, string, string, string];
    const id = ids.find(
      (i) =>
        i.ino === BigInt(ino) && major(i.dev) === BigInt(`0x${maj}`) && minor(i.dev) === BigInt(`0x${min}`),
    );
    if (id === undefined) continue;
    const pid = Number(pidText) > 0 ? Number(pidText) : null;
    found.set(`${pid}:${id.file}`, {
      pid,
      command: pid === null ? null : commandOf(pid),
      check: "POSIX lock (/proc/locks)",
      file: id.file,
    });
  }
  return [...found.values()];
}

/**
 * SQLite's own answer: an exclusive lock taken and released at once on a connection of our
 * own, with a short busy timeout. It fails while another connection reads or writes (a
 * rollback-journal file) or writes (WAL). Closing this connection, the last one on the file,
 * lets SQLite fold a WAL nobody holds back into the file and delete it, as it always does.
 */
function probeHolders(path: string, timeoutMs: number): FileHolder[] {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { fileMustExist: true, timeout: timeoutMs });
    db.exec("BEGIN EXCLUSIVE");
    db.exec("ROLLBACK");
    return [];
  } catch (error) {
    const code = sqliteCode(error) ?? "";
    if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
      return [
        { pid: null, command: null, check: "SQLite lock probe (an exclusive lock was refused)", file: path },
      ];
    }
    throw error;
  } finally {
    db?.close();
  }
}

/**
 * Who holds the database at `path` (and its `-wal`, `-shm`, `-journal`): first by the open
 * descriptors and POSIX locks the kernel lists (which find an idle agent too, on Linux), then,
 * when those find no one, by trying SQLite's exclusive lock for `probeTimeoutMs`. Nothing is
 * opened on the file itself except through SQLite, so no holder's locks are disturbed. An empty
 * list: nobody holds it (a missing file has no holders).
 */
export function findHolders(path: string, options: { probeTimeoutMs?: number } = {}): FileHolder[] {
  const ids = fileIds(path);
  if (ids.length === 0) return [];
  const holders = [...(descriptorHolders(ids) ?? []), ...(lockHolders(ids) ?? [])];
  if (holders.length > 0) return holders;
  if (!ids.some((i) => i.file === path)) return [];
  return probeHolders(path, options.probeTimeoutMs ?? 200);
}

/** Whether this process has a descriptor open on the file (Linux); `null` when it cannot tell. */
export function thisProcessHolds(path: string): boolean | null {
  const ids = fileIds(path).filter((i) => i.file === path);
  if (ids.length === 0) return false;
  let fds: string[];
  try {
    fds = readdirSync("/proc/self/fd");
  } catch {
    return null;
  }
  return fds.some((fd) => {
    const st = statQuietly(`/proc/self/fd/${fd}`);
    return st !== undefined && ids.some((i) => i.ino === st.ino && i.dev === st.dev);
  });
}
