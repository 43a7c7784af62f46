import { chmodSync, existsSync, lstatSync, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { UnsafePathError } from "@hermes/core";

/** The database file and the sidecars SQLite creates beside it in WAL mode. */
export function databaseFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`];
}

/**
 * Refuses a database path, or a sidecar, that is a symbolic link: SQLite would follow it and
 * write the user's history wherever it points.
 */
export function refuseSymlinks(path: string): void {
  if (path.includes("\0")) throw new UnsafePathError(path, "Database path contains a NUL byte");
  for (const file of databaseFiles(path)) {
    let isLink = false;
    try {
      isLink = lstatSync(file).isSymbolicLink();
    } catch {
      continue; // does not exist yet
    }
    if (isLink) {
      throw new UnsafePathError(
        file,
        `Refusing to open ${file}: it is a symbolic link. Replace it with a regular file.`,
      );
    }
  }
}

/**
 * Creates the parent directory with mode 0700 when it is missing (chmod after mkdir, so the
 * umask cannot widen it). An existing directory is left as it is.
 */
export function ensureParentDirectory(path: string): void {
  const dir = dirname(path);
  if (existsSync(dir)) {
    // A regular file where the directory should be: SQLite would fail with a bare CANTOPEN.
    if (!statSync(dir).isDirectory()) {
      throw new UnsafePathError(path, `Cannot open ${path}: ${dir} is not a directory`);
    }
    return;
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/**
 * Tightens the database file and its sidecars to 0600 by path. Never by opening the file:
 * closing any descriptor of a live SQLite file drops this process's POSIX locks on it.
 */
export function tightenPermissions(path: string): void {
  for (const file of databaseFiles(path)) {
    try {
      const st = lstatSync(file);
      if (st.isFile() && (st.mode & 0o777) !== 0o600) chmodSync(file, 0o600);
    } catch {
      // Missing sidecar (not created yet) or no right to chmod a file we do not own.
    }
  }
}
