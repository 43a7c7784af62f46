import { chmodSync, existsSync, linkSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ensureParentDirectory, refuseSymlinks } from "../file-security.js";
import { resolveStatePath } from "../state-path.js";
import { ArchiveInvalidError } from "./archive-invalid-error.js";
import type { BackupManifest } from "./backup-manifest.js";
import { findHolders } from "./find-holders.js";
import { syncDirectory, syncFile } from "./sync-directory.js";
import { TargetInUseError } from "./target-in-use-error.js";
import { type BackupProgress, unpackArchive } from "./unpack-archive.js";

/** Options of {@link restoreFrom}. */
export interface RestoreOptions {
  /** The database to replace; default `resolveStatePath()`. */
  target?: string;
  /** How long the SQLite lock probe waits for a holder's lock, in ms (default 200). */
  probeTimeoutMs?: number;
  onProgress?: (p: BackupProgress) => void;
}

/** What {@link restoreFrom} did. */
export interface RestoreResult {
  target: string;
  /** Where the file that was replaced is kept (`<target>.before-restore-<time>`), or `null` when there was none. */
  previous: string | null;
  /** Sidecars of the replaced file moved beside `previous` (a `-wal`, a `-journal`) or removed (a `-shm`). */
  sidecars: string[];
  manifest: BackupManifest;
}

function refuseIfHeld(target: string, probeTimeoutMs: number | undefined): void {
  const holders = findHolders(target, probeTimeoutMs === undefined ? {} : { probeTimeoutMs });
  if (holders.length > 0) throw new TargetInUseError(target, holders);
}

/**
 * Moves the replaced file's sidecars with it, so `previous` opens with every commit it had: a
 * `-wal` nobody holds still carries commits (and would be replayed into the restored file if it
 * stayed), a `-journal` would roll the new file back. The `-shm` is only an index of the WAL.
 */
function moveSidecars(target: string, previous: string | null): string[] {
  const moved: string[] = [];
  for (const suffix of ["-wal", "-journal", "-shm"]) {
    const file = `${target}${suffix}`;
    if (!existsSync(file)) continue;
    if (suffix === "-shm" || previous === null) rmSync(file, { force: true });
    else renameSync(file, `${previous}${suffix}`);
    moved.push(file);
  }
  return moved;
}

/**
 * Restores a backup (its `.db.gz` or `.manifest.json`) into `target`. Refuses with
 * `TARGET_IN_USE` while any process holds the target (open descriptors and POSIX locks on
 * Linux, then SQLite's exclusive lock), leaving it untouched; refuses with `ARCHIVE_INVALID`
 * an archive that does not decompress to the snapshot its manifest describes or fails its
 * checks. Otherwise: decompresses beside the target (0600), checks it, fsyncs it, keeps the
 * current file as `<target>.before-restore-<time>` (a hard link, with its `-wal` or `-journal`
 * beside it), and renames the new file over the target in one step.
 *
 * @example
 * await restoreFrom("/var/backups/hermes/state-2026-12-07T03-00-00-000Z.db.gz");
 */
export async function restoreFrom(archive: string, options: RestoreOptions = {}): Promise<RestoreResult> {
  const target = resolve(options.target ?? resolveStatePath());
  refuseSymlinks(target);
  refuseIfHeld(target, options.probeTimeoutMs);
  ensureParentDirectory(target);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const incoming = join(dirname(target), `.${stamp}.restoring.db`);
  try {
    const unpacked = await unpackArchive(resolve(archive), incoming, options.onProgress);
    if (unpacked.problems.length > 0) throw new ArchiveInvalidError(unpacked.archive, unpacked.problems);
    // The check opened it with SQLite: a WAL file's -wal/-shm are gone once it closed, and
    // nothing was written; flush it (and its mode) before it takes the target's name.
    chmodSync(incoming, 0o600);
    syncFile(incoming);
    // Again, right before the swap: a process may have opened the target meanwhile.
    refuseIfHeld(target, options.probeTimeoutMs);
    let previous: string | null = null;
    if (statSync(target, { throwIfNoEntry: false }) !== undefined) {
      previous = `${target}.before-restore-${stamp}`;
      linkSync(target, previous);
    }
    const sidecars = moveSidecars(target, previous);
    renameSync(incoming, target);
    syncDirectory(dirname(target));
    return { target, previous, sidecars, manifest: unpacked.manifest };
  } finally {
    for (const f of [incoming, `${incoming}-wal`, `${incoming}-shm`, `${incoming}-journal`])
      rmSync(f, { force: true });
  }
}
