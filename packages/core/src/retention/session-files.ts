import { readdir, unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { requireId } from "../validation/arguments.js";

/** Optional `sessionsDir`: a non-empty string or absent. */
export function sessionsDirOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return requireId("sessionsDir", value);
}

/**
 * Removes a deleted session's transcript files from `dir`: `<id>.json`, `<id>.jsonl` and the
 * gateway's `request_dump_<id>_*.json`. Best-effort: a missing file or a filesystem error never
 * fails the (already committed) delete.
 *
 * Unlike the reference (which globs), the id is matched literally, so an id holding `*`, `?` or
 * `[` cannot select other sessions' dumps, and an id that is not a plain file name (`..`, `a/b`)
 * removes nothing outside `dir`.
 */
export async function removeSessionFiles(dir: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  let entries: string[] = [];
  try {
    entries = await readdir(dir);
  } catch {
    // Not a directory, missing, unreadable: nothing to clean.
    return;
  }
  const present = new Set(entries);
  const doomed: string[] = [];
  for (const id of ids) {
    for (const name of [`${id}.json`, `${id}.jsonl`]) {
      if (basename(name) === name && present.has(name)) doomed.push(name);
    }
    const dumpPrefix = `request_dump_${id}_`;
    if (basename(dumpPrefix) !== dumpPrefix) continue;
    for (const name of entries) {
      if (name.startsWith(dumpPrefix) && name.endsWith(".json")) doomed.push(name);
    }
  }
  await Promise.all(doomed.map((name) => unlink(join(dir, name)).catch(() => {})));
}
