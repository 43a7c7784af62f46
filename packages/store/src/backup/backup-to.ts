import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { basename, join, resolve } from "node:path";
import { HermesStoreError, InvalidArgumentError, StoreCorruptError } from "@hermes/core";
import { refuseSymlinks } from "../file-security.js";
import { resolveStatePath } from "../state-path.js";
import {
  ARCHIVE_SUFFIX,
  type BackupManifest,
  manifestPathOf,
  writeBackupManifest,
} from "./backup-manifest.js";
import { type SnapshotCheck, snapshotSound } from "./check-snapshot.js";
import { compressFile } from "./compress-file.js";
import { thisProcessHolds } from "./find-holders.js";
import { listBackups } from "./list-backups.js";
import { runBackupTask } from "./run-backup-task.js";
import { syncDirectory } from "./sync-directory.js";
import type { BackupProgress } from "./unpack-archive.js";

/** Options of {@link backupTo}. */
export interface BackupOptions {
  /** The database to back up; default `resolveStatePath()` (`$HERMES_HOME/state.db`, else `~/.hermes/state.db`). */
  source?: string;
  /** After this backup, keep only the `keep` newest complete backups of the folder (a positive integer). */
  keep?: number;
  /** gzip level, 1 (fastest, the default) to 9 (smallest). */
  compressionLevel?: number;
  /**
   * How long the snapshot waits for a rollback-journal writer that is committing, in ms
   * (default 10,000); it runs on a thread of its own, so the wait blocks nothing.
   */
  busyTimeoutMs?: number;
  /** Told how each long step advances (bytes). */
  onProgress?: (p: BackupProgress) => void;
}

/** What {@link backupTo} made. */
export interface BackupResult {
  /** The archive (`<folder>/<name>.db.gz`). */
  archive: string;
  /** Its manifest (`<folder>/<name>.manifest.json`). */
  manifestPath: string;
  manifest: BackupManifest;
  /** Archives removed by `keep` (oldest first). */
  removed: string[];
}

const HEADER = Buffer.from("SQLite format 3\0", "latin1");

/**
 * Whether the file's header says WAL. Read through a descriptor of our own, which is only
 * safe because the caller made sure this process holds no lock on the file (closing a
 * descriptor drops them all).
 */
function headerSaysWal(path: string): boolean {
  const header = Buffer.alloc(100);
  const fd = openSync(path, "r");
  try {
    if (readSync(fd, header, 0, 100, 0) < 100 || !header.subarray(0, 16).equals(HEADER)) return false;
  } finally {
    closeSync(fd);
  }
  return header[18] === 2 || header[19] === 2;
}

const stampOf = (path: string) => {
  const st = statSync(path, { bigint: true });
  return `${st.ino}:${st.size}:${st.mtimeNs}`;
};

/**
 * A WAL-mode file with no `-wal` is one that no process has open: a read-only SQLite
 * connection would create `-wal`/`-shm` beside it (and leave them), so the file is copied as
 * it is instead, between two identical stats with no `-wal` appearing. `false` when a writer
 * turned up meanwhile (the online backup is used then).
 */
function copyIdleWalFile(source: string, dest: string): boolean {
  if (existsSync(`${source}-wal`) || thisProcessHolds(source) !== false || !headerSaysWal(source))
    return false;
  const before = stampOf(source);
  copyFileSync(source, dest);
  if (existsSync(`${source}-wal`) || stampOf(source) !== before) {
    rmSync(dest, { force: true });
    return false;
  }
  return true;
}

/** A folder for backups: created 0700, or an existing one of ours tightened to 0700. */
function prepareFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = statSync(dir);
  if (!st.isDirectory()) throw new InvalidArgumentError("dir", `${dir} is not a folder`);
  if ((st.mode & 0o777) !== 0o700 && st.uid === process.getuid?.()) chmodSync(dir, 0o700);
}

/** `<stem>-2026-12-07T14-29-00-123Z`, unused in `dir`. */
function archiveName(dir: string, source: string, at: Date): string {
  const stem = basename(source).replace(/\.(db|sqlite3?)$/i, "");
  const base = `${stem}-${at.toISOString().replace(/[:.]/g, "-")}`;
  for (let n = 0; ; n++) {
    const name = `${base}${n === 0 ? "" : `-${n}`}${ARCHIVE_SUFFIX}`;
    if (!existsSync(join(dir, name)) && !existsSync(manifestPathOf(join(dir, name)))) return name;
  }
}

function validate(options: BackupOptions): void {
  const { keep, compressionLevel: level } = options;
  if (keep !== undefined && (!Number.isInteger(keep) || keep < 1)) {
    throw new InvalidArgumentError("keep", `keep must be a positive integer, got ${keep}`);
  }
  if (level !== undefined && (!Number.isInteger(level) || level < 1 || level > 9)) {
    throw new InvalidArgumentError(
      "compressionLevel",
      `compressionLevel must be an integer from 1 to 9, got ${level}`,
    );
  }
}

/**
 * Backs up a database into the folder `dir`: a snapshot of one instant taken while other
 * processes keep writing (SQLite's online backup in one step, inside one read transaction of
 * the source, on a thread of its own), verified (`integrity_check`, the FTS integrity checks
 * the file allows, row counts) before it counts, gzip-compressed into `<name>.db.gz` and
 * described by `<name>.manifest.json`. The source is opened read-only and left as it was: no
 * journal-mode change, nothing created beside it. Folder 0700, files 0600.
 *
 * @example
 * const { archive, manifest } = await backupTo("/var/backups/hermes", { keep: 7 });
 */
export async function backupTo(dir: string, options: BackupOptions = {}): Promise<BackupResult> {
  validate(options);
  const source = resolve(options.source ?? resolveStatePath());
  refuseSymlinks(source);
  if (!statSync(source, { throwIfNoEntry: false })?.isFile()) {
    throw new InvalidArgumentError("source", `No database file at ${source}`);
  }
  const folder = resolve(dir);
  prepareFolder(folder);
  const staging = mkdtempSync(join(folder, ".backup-"));
  chmodSync(staging, 0o700);
  const progress = options.onProgress;
  try {
    const snapshotPath = join(staging, "snapshot.db");
    const createdAt = new Date();
    const t0 = performance.now();
    let method: BackupManifest["snapshot"]["method"] = "file-copy";
    let check: SnapshotCheck;
    const total = statSync(source).size + (statSync(`${source}-wal`, { throwIfNoEntry: false })?.size ?? 0);
    progress?.({ step: "snapshot", done: 0, total });
    let snapshotMs: number;
    let checkMs: number;
    if (copyIdleWalFile(source, snapshotPath)) {
      snapshotMs = performance.now() - t0;
      progress?.({ step: "check", done: 0, total: 1 });
      const reply = await runBackupTask({ kind: "check", path: snapshotPath });
      if (!reply.ok) throw new StoreCorruptError(source, `${source} cannot be read: ${reply.message}`);
      check = reply.check;
      checkMs = reply.checkMs;
    } else {
      method = "online-backup";
      const reply = await runBackupTask(
        { kind: "snapshot", source, dest: snapshotPath, busyTimeoutMs: options.busyTimeoutMs ?? 10_000 },
        {
          path: snapshotPath,
          onBytes: (done) => progress?.({ step: "snapshot", done: Math.min(done, total), total }),
        },
      );
      if (!reply.ok) {
        if (reply.code?.startsWith("SQLITE_BUSY")) {
          throw new HermesStoreError(
            "STORE_BUSY",
            `${source} stayed locked by a writer for ${options.busyTimeoutMs ?? 10_000} ms; no backup was taken. Retry, or raise busyTimeoutMs.`,
          );
        }
        throw new StoreCorruptError(source, `The snapshot of ${source} failed: ${reply.message}`);
      }
      check = reply.check;
      snapshotMs = reply.snapshotMs;
      checkMs = reply.checkMs;
    }
    if (!snapshotSound(check)) {
      const fts = check.fts.filter((f) => f.result !== "ok" && !f.result.startsWith("skipped"));
      throw new StoreCorruptError(
        source,
        `The snapshot of ${source} fails its checks (integrity: ${check.integrity.slice(0, 3).join(", ")}${fts.map((f) => `; ${f.table}: ${f.result}`).join("")}); no backup was kept. Run \`hermes-sessions doctor\` on the file.`,
      );
    }
    chmodSync(snapshotPath, 0o600);
    const name = archiveName(folder, source, createdAt);
    const packed = join(staging, name);
    const tc = performance.now();
    const size = statSync(snapshotPath).size;
    const compressed = await compressFile(snapshotPath, packed, {
      level: options.compressionLevel ?? 1,
      onBytes: (done) => progress?.({ step: "compress", done, total: size }),
    });
    const compressMs = performance.now() - tc;
    const archive = join(folder, name);
    renameSync(packed, archive);
    const manifest: BackupManifest = {
      format: "hermes-state-backup",
      version: 1,
      archive: name,
      compression: "gzip",
      createdAt: createdAt.toISOString(),
      source: {
        path: source,
        applicationId: check.applicationId,
        generation: check.generation,
        journalMode: check.journalMode,
      },
      schemaVersion: check.schemaVersion,
      counts: {
        sessions: check.counts.sessions ?? 0,
        messages: check.counts.messages ?? 0,
        tables: check.counts,
      },
      snapshot: {
        method,
        bytes: compressed.bytes,
        sha256: compressed.sha256,
        pageSize: check.pageSize,
        integrity: check.integrity.join("; "),
        fts: check.fts,
      },
      archiveBytes: compressed.archiveBytes,
      archiveSha256: compressed.archiveSha256,
      timings: {
        snapshotMs: Math.round(snapshotMs),
        checkMs: Math.round(checkMs),
        compressMs: Math.round(compressMs),
      },
    };
    const manifestPath = writeBackupManifest(folder, manifest);
    syncDirectory(folder);
    const removed = options.keep === undefined ? [] : rotateBackups(folder, options.keep, source);
    return { archive, manifestPath, manifest, removed };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Removes the oldest complete backups of `dir` beyond the `keep` newest (of `source` only, when
 * given: one folder may hold the backups of several profiles); returns the archives removed.
 */
export function rotateBackups(dir: string, keep: number, source?: string): string[] {
  const complete = listBackups(dir).filter(
    (b) =>
      b.manifest !== null &&
      b.problem === null &&
      (source === undefined || b.manifest.source.path === source),
  );
  const old = complete.slice(0, Math.max(0, complete.length - keep));
  for (const b of old) {
    rmSync(b.archive, { force: true });
    rmSync(b.manifestPath, { force: true });
  }
  if (old.length > 0) syncDirectory(dir);
  return old.map((b) => b.archive);
}
