import type { SessionStore } from "@hermes/core";
import Database from "better-sqlite3";
import { distance } from "fastest-levenshtein";
import { CliError } from "./cli-error.js";

/** Candidates listed in an "ambiguous" or "no match" error. */
const SHOWN = 5;

/**
 * Finds the session a user means, as the reference's CLI does: an exact id, else a unique id
 * prefix, else a title (the newest session of that title's lineage, `X` → `X #3`).
 * A prefix several ids start with is reported as ambiguous, with the ids; anything else that
 * matches nothing suggests the closest ids and titles. Both are one line.
 */
export async function resolveSession(store: SessionStore, ref: string): Promise<string> {
  if (ref.trim() === "") throw new CliError("A session id, id prefix or title is required");
  const byId = await store.resolveSessionId(ref);
  if (byId !== null) return byId;
  const byTitle = await store.resolveSessionByTitle(ref);
  if (byTitle !== null) return byTitle;
  const known = store.backend.kind === "sqlite" ? knownSessions(store.backend.path) : [];
  const prefixed = known.filter((s) => s.id.startsWith(ref));
  if (prefixed.length > 1) {
    const more = prefixed.length > SHOWN ? ` (+${prefixed.length - SHOWN} more)` : "";
    throw new CliError(
      `'${ref}' is ambiguous: ${prefixed.length} sessions start with it (give more of the id); ` +
        `did you mean ${prefixed
          .slice(0, SHOWN)
          .map((s) => s.id)
          .join(", ")}${more}?`,
    );
  }
  const hints = closestSessions(known, ref);
  const hint = hints.length > 0 ? `; did you mean ${hints.join(", ")}?` : "";
  throw new CliError(`No session matches '${ref}'${hint}`);
}

/** A session's id and title, for suggestions and completion. */
export interface KnownSession {
  id: string;
  title: string | null;
}

/**
 * The newest 5,000 sessions' ids and titles, through a separate read-only connection (the
 * store's API has no "all ids" call, and this runs only when a reference failed). Empty for a
 * PostgreSQL store or an unreadable file: the error then comes without suggestions.
 */
export function knownSessions(path: string): KnownSession[] {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    return db
      .prepare("SELECT id, title FROM sessions ORDER BY started_at DESC, id DESC LIMIT 5000")
      .all() as KnownSession[];
  } catch {
    return [];
  } finally {
    db?.close();
  }
}

/**
 * Up to three ids or titles close to `ref`: those that contain it first, then the smallest
 * edit distance (Levenshtein, case-insensitive) relative to the length of `ref`.
 */
export function closestSessions(known: readonly KnownSession[], ref: string, max = 3): string[] {
  const needle = ref.toLowerCase();
  const score = (text: string) => {
    const t = text.toLowerCase();
    return t.includes(needle) ? -1 : distance(needle, t.slice(0, 200)) / Math.max(needle.length, 1);
  };
  const scored: Array<{ label: string; score: number }> = [];
  for (const s of known) {
    scored.push({ label: s.id, score: score(s.id) });
    if (s.title) scored.push({ label: `'${s.title}' (${s.id})`, score: score(s.title) });
  }
  return scored
    .filter((s) => s.score <= 0.5)
    .sort((a, b) => a.score - b.score)
    .slice(0, max)
    .map((s) => s.label);
}
