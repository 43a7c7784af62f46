import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { ArchiveInvalidError } from "./archive-invalid-error.js";
import type { BackupManifest } from "./backup-manifest.js";
import type { SnapshotCheck } from "./check-snapshot.js";
import { type BackupProgress, unpackArchive } from "./unpack-archive.js";

/** What {@link verifyBackup} found. */
export interface BackupVerification {
  /** The archive checked. */
  archive: string;
  /** Whether it decompresses to exactly the snapshot its manifest describes, and that passes its checks. */
  ok: boolean;
  /** Every finding (empty when `ok`). */
  problems: string[];
  manifest: BackupManifest | null;
  check: SnapshotCheck | null;
}

/** A private scratch folder beside `path`, else in the system's temp folder. */
function scratchBeside(path: string): string {
  let dir: string;
  try {
    dir = mkdtempSync(join(dirname(path), ".verify-"));
  } catch {
    dir = mkdtempSync(join(tmpdir(), "hermes-verify-"));
  }
  chmodSync(dir, 0o700);
  return dir;
}

/**
 * Checks that an archive (its `.db.gz` or its `.manifest.json`) still decompresses to the
 * snapshot its manifest describes (sha256 of both the archive and the snapshot) and that the
 * snapshot passes `integrity_check`, the FTS checks and has the manifest's row counts. The
 * snapshot is decompressed into a private scratch folder, removed afterwards. Never throws
 * for a bad archive: see `ok` and `problems`.
 */
export async function verifyBackup(
  path: string,
  options: { onProgress?: (p: BackupProgress) => void } = {},
): Promise<BackupVerification> {
  const archivePath = resolve(path);
  const scratch = scratchBeside(archivePath);
  try {
    const unpacked = await unpackArchive(archivePath, join(scratch, "snapshot.db"), options.onProgress);
    return {
      archive: unpacked.archive,
      ok: unpacked.problems.length === 0,
      problems: unpacked.problems,
      manifest: unpacked.manifest,
      check: unpacked.check,
    };
  } catch (error) {
    if (!(error instanceof ArchiveInvalidError)) throw error;
    return { archive: archivePath, ok: false, problems: [...error.problems], manifest: null, check: null };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
