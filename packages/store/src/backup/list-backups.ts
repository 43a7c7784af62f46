import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { HermesStoreError } from "@hermes/core";
import {
  ARCHIVE_SUFFIX,
  type BackupManifest,
  MANIFEST_SUFFIX,
  manifestPathOf,
  readBackupManifest,
} from "./backup-manifest.js";

/** One backup found in a folder by {@link listBackups}. */
export interface BackupEntry {
  /** The archive's path (`<name>.db.gz`). */
  archive: string;
  manifestPath: string;
  /** The manifest, or `null` when it is missing or unreadable (see `problem`). */
  manifest: BackupManifest | null;
  /** Size of the archive on disk; `null` when it is missing. */
  archiveBytes: number | null;
  /** Why this backup is not complete (no manifest, no archive, a size other than the manifest's); `null` when it is. */
  problem: string | null;
}

/**
 * The backups in a folder, oldest first: every manifest with its archive, and every archive
 * without a manifest (an unfinished backup). Reads names, sizes and manifests only; run
 * `verifyBackup` to decompress and check an archive. A missing folder has none.
 */
export function listBackups(dir: string): BackupEntry[] {
  const folder = resolve(dir);
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return [];
    throw new HermesStoreError(
      "INVALID_ARGUMENT",
      `Cannot read the backup folder ${folder}: ${(error as Error).message}`,
    );
  }
  const entries = new Map<string, BackupEntry>();
  for (const name of names) {
    if (!name.endsWith(MANIFEST_SUFFIX) || name.startsWith(".")) continue;
    const manifestPath = join(folder, name);
    try {
      const manifest = readBackupManifest(manifestPath);
      const archive = join(folder, manifest.archive);
      const size = statSync(archive, { throwIfNoEntry: false })?.size ?? null;
      const problem =
        size === null
          ? `the archive ${manifest.archive} is missing`
          : size !== manifest.archiveBytes
            ? `the archive is ${size} bytes, the manifest says ${manifest.archiveBytes}`
            : null;
      entries.set(archive, { archive, manifestPath, manifest, archiveBytes: size, problem });
    } catch (error) {
      const archive = join(folder, `${name.slice(0, -MANIFEST_SUFFIX.length)}${ARCHIVE_SUFFIX}`);
      const size = statSync(archive, { throwIfNoEntry: false })?.size ?? null;
      entries.set(archive, {
        archive,
        manifestPath,
        manifest: null,
        archiveBytes: size,
        problem: (error as Error).message,
      });
    }
  }
  for (const name of names) {
    if (!name.endsWith(ARCHIVE_SUFFIX) || name.startsWith(".")) continue;
    const archive = join(folder, name);
    if (entries.has(archive)) continue;
    entries.set(archive, {
      archive,
      manifestPath: manifestPathOf(archive),
      manifest: null,
      archiveBytes: statSync(archive).size,
      problem: "no manifest beside it (an unfinished backup)",
    });
  }
  const time = (e: BackupEntry) => e.manifest?.createdAt ?? "";
  return [...entries.values()].sort(
    (a, b) => time(a).localeCompare(time(b)) || a.archive.localeCompare(b.archive),
  );
}
