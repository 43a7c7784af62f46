import { openReadOnlyDatabase, type ReadOnlyDatabase, type SessionStoreApi } from "@hermes/store";
import { CliError } from "./cli-error.js";

/**
 * Finds the session a user means, as the reference's CLI does: an exact id, else a unique id
 * prefix, else a title (the newest session of that title's lineage, `X` → `X #3`).
 * Throws a one-line error that suggests the closest ids and titles.
 */
export async function resolveSession(store: SessionStoreApi, ref: string): Promise<string> {
  if (ref.trim() === "") throw new CliError("A session id, id prefix or title is required");
  const byId = await store.resolveSessionId(ref);
  if (byId !== null) return byId;
  const byTitle = await store.resolveSessionByTitle(ref);
  if (byTitle !== null) return byTitle;
  const hints = suggestSessions(store.path, ref);
  const hint = hints.length > 0 ? `; did you mean ${hints.join(", ")}?` : "";
  throw new CliError(`No session matches '${ref}'${hint}`);
}

/** Levenshtein distance, case-insensitive, capped work for long strings. */
function distance(a: string, b: string): number {
  const x = [...a.toLowerCase()].slice(0, 120);
  const y = [...b.toLowerCase()].slice(0, 120);
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    for (let j = 1; j <= y.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[y.length]!;
}

/**
 * Up to three ids or titles close to `ref`: every id an ambiguous prefix matches first, then
 * titles and ids containing it, then the smallest edit distance. Read through a separate
 * read-only connection: the store's API has no "all ids" call, and this runs only on failure.
 */
export function suggestSessions(path: string, ref: string, max = 3): string[] {
  let file: ReadOnlyDatabase | undefined;
  try {
    // Read-only and without a trace (the command may be reading another user's live file).
    file = openReadOnlyDatabase(path);
    const rows = file.db
      .prepare("SELECT id, title FROM sessions ORDER BY started_at DESC LIMIT 5000")
      .all() as Array<{
      id: string;
      title: string | null;
    }>;
    const needle = ref.toLowerCase();
    const scored: Array<{ label: string; score: number }> = [];
    for (const row of rows) {
      const idScore = row.id.startsWith(ref)
        ? -2
        : row.id.toLowerCase().includes(needle)
          ? -1
          : distance(ref, row.id) / Math.max(ref.length, 1);
      scored.push({ label: row.id, score: idScore });
      if (row.title) {
        const t = row.title.toLowerCase();
        const titleScore = t.includes(needle) ? -1 : distance(ref, row.title) / Math.max(ref.length, 1);
        scored.push({ label: `'${row.title}' (${row.id})`, score: titleScore });
      }
    }
    return scored
      .filter((s) => s.score <= 0.5)
      .sort((a, b) => a.score - b.score)
      .slice(0, max)
      .map((s) => s.label);
  } catch {
    return [];
  } finally {
    file?.close();
  }
}
