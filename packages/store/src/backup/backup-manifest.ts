import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ArchiveInvalidError } from "./archive-invalid-error.js";
import type { SnapshotCheck } from "./check-snapshot.js";

/** The file name ending of an archive (a gzip of the snapshot) and of its manifest. */
export const ARCHIVE_SUFFIX = ".db.gz";
export const MANIFEST_SUFFIX = ".manifest.json";
const FORMAT = "hermes-state-backup";

/**
 * What a backup holds, written beside its archive (`<name>.manifest.json` next to
 * `<name>.db.gz`) once the archive is complete and on disk: an archive without one is
 * unfinished and never counts.
 */
export interface BackupManifest {
  format: typeof FORMAT;
  version: 1;
  /** The archive's file name, in the same folder. */
  archive: string;
  compression: "gzip";
  /** When the snapshot was taken (ISO 8601, UTC). */
  createdAt: string;
  source: {
    /** Absolute path of the file that was backed up. */
    path: string;
    /** `PRAGMA application_id`: the agent's generation stamp (0 when unset). */
    applicationId: number;
    /** `state_meta.db_file_generation`, where the file has it. */
    generation: string | null;
    journalMode: "wal" | "delete";
  };
  schemaVersion: number | null;
  /** Rows of sessions and messages, and of every ordinary table. */
  counts: { sessions: number; messages: number; tables: Record<string, number> };
  snapshot: {
    /** `online-backup` (SQLite's backup of one read transaction) or `file-copy` (a file no process had open). */
    method: "online-backup" | "file-copy";
    bytes: number;
    sha256: string;
    pageSize: number;
    integrity: string;
    fts: SnapshotCheck["fts"];
  };
  archiveBytes: number;
  archiveSha256: string;
  /** Milliseconds spent on each step. */
  timings: { snapshotMs: number; checkMs: number; compressMs: number };
}

/** The manifest path of an archive (or the manifest path itself). */
export function manifestPathOf(path: string): string {
  if (path.endsWith(MANIFEST_SUFFIX)) return path;
  const name = basename(path);
  const stem = name.endsWith(ARCHIVE_SUFFIX) ? name.slice(0, -ARCHIVE_SUFFIX.length) : name;
  return join(dirname(path), `${stem}${MANIFEST_SUFFIX}`);
}

/** Reads and validates the manifest of an archive; `ARCHIVE_INVALID` when it is missing or malformed. */
export function readBackupManifest(path: string): BackupManifest {
  const file = manifestPathOf(path);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    const missing = (error as { code?: string }).code === "ENOENT";
    throw new ArchiveInvalidError(
      path,
      [
        missing
          ? `its manifest ${file} is missing (an unfinished backup?)`
          : `its manifest ${file} is not readable JSON`,
      ],
      { cause: error },
    );
  }
  const m = value as Partial<BackupManifest>;
  if (
    m.format !== FORMAT ||
    m.version !== 1 ||
    typeof m.archive !== "string" ||
    basename(m.archive) !== m.archive ||
    typeof m.snapshot?.sha256 !== "string" ||
    typeof m.counts?.tables !== "object"
  ) {
    throw new ArchiveInvalidError(path, [`${file} is not a backup manifest of this format (${FORMAT} v1)`]);
  }
  return m as BackupManifest;
}

/** Writes a manifest atomically (a temporary file, fsync, rename), mode 0600. */
export function writeBackupManifest(dir: string, manifest: BackupManifest): string {
  const file = manifestPathOf(join(dir, manifest.archive));
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  const fd = openSync(tmp, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  return file;
}
