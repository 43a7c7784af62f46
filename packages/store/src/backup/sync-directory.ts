import { closeSync, fsyncSync, openSync } from "node:fs";

/** Flushes a folder's entries (a rename in it) to disk; best effort where folders cannot be synced. */
export function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some file systems (and platforms) refuse fsync on a folder.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Flushes a file of our own (one no SQLite connection has open) to disk. */
export function syncFile(path: string): void {
  const fd = openSync(path, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
