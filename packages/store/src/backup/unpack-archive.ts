import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { type BackupManifest, manifestPathOf, readBackupManifest } from "./backup-manifest.js";
import { type SnapshotCheck, snapshotSound } from "./check-snapshot.js";
import { decompressFile } from "./compress-file.js";
import { runBackupTask } from "./run-backup-task.js";

/** What unpacking an archive found: the snapshot written to `dest`, and what is wrong with it. */
export interface UnpackedArchive {
  manifest: BackupManifest;
  /** The archive file the manifest names. */
  archive: string;
  check: SnapshotCheck | null;
  /** Every finding; empty when the snapshot is exactly what the manifest describes and sound. */
  problems: string[];
}

/** Progress of a long backup step: `done` of `total` bytes. */
export interface BackupProgress {
  step: "snapshot" | "check" | "compress" | "decompress";
  done: number;
  total: number;
}

/**
 * Decompresses an archive into `dest` and holds it to its manifest: the archive's and the
 * snapshot's sha256 and sizes, then (on a backup thread) `integrity_check`, the FTS checks and
 * the row count of every table. Throws `ARCHIVE_INVALID` only when the manifest itself is
 * missing or malformed; anything else is reported in `problems`.
 */
export async function unpackArchive(
  path: string,
  dest: string,
  onProgress?: (p: BackupProgress) => void,
): Promise<UnpackedArchive> {
  const manifest = readBackupManifest(path);
  const archive = join(dirname(manifestPathOf(path)), manifest.archive);
  const problems: string[] = [];
  if (!existsSync(archive))
    return { manifest, archive, check: null, problems: [`the archive ${archive} is missing`] };
  let unpacked: Awaited<ReturnType<typeof decompressFile>>;
  try {
    unpacked = await decompressFile(archive, dest, {
      onBytes: (done) => onProgress?.({ step: "decompress", done, total: manifest.archiveBytes }),
    });
  } catch (error) {
    return {
      manifest,
      archive,
      check: null,
      problems: [`${archive} does not decompress: ${(error as Error).message}`],
    };
  }
  if (unpacked.archiveSha256 !== manifest.archiveSha256) {
    problems.push(
      `the archive's sha256 is ${unpacked.archiveSha256}, the manifest says ${manifest.archiveSha256}`,
    );
  }
  if (unpacked.sha256 !== manifest.snapshot.sha256 || unpacked.bytes !== manifest.snapshot.bytes) {
    problems.push(
      `the snapshot inside is ${unpacked.bytes} bytes with sha256 ${unpacked.sha256}; the manifest says ${manifest.snapshot.bytes} bytes, ${manifest.snapshot.sha256}`,
    );
    return { manifest, archive, check: null, problems };
  }
  onProgress?.({ step: "check", done: 0, total: 1 });
  const reply = await runBackupTask({ kind: "check", path: dest });
  if (!reply.ok) {
    problems.push(`the snapshot cannot be opened: ${reply.message}`);
    return { manifest, archive, check: null, problems };
  }
  const check = reply.check;
  if (!snapshotSound(check)) {
    problems.push(
      `the snapshot fails its checks: integrity ${check.integrity.slice(0, 3).join(", ")}; ${check.fts.map((f) => `${f.table} ${f.result}`).join(", ")}`,
    );
  }
  for (const [table, rows] of Object.entries(manifest.counts.tables)) {
    if (check.counts[table] !== rows) {
      problems.push(`${table} has ${check.counts[table] ?? "no"} rows, the manifest says ${rows}`);
    }
  }
  onProgress?.({ step: "check", done: 1, total: 1 });
  return { manifest, archive, check, problems };
}
