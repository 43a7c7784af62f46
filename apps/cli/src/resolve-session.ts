import type { SessionStore } from "@hermes/core";
import { openReadOnlyDatabase, type ReadOnlyDatabase } from "@hermes/store";
import { distance } from "fastest-levenshtein";
import { CliError } from "./cli-error.js";
import { countOf } from "./render/plural.js";

/** `--help` text of a command that reads a session: how the name given is resolved. */
export const NAME_HELP = `
How a session is found: an exact id, else the one id that starts with what you gave (several:
refused, with them listed), else a title: the newest session of its lineage ('Fix bug' finds
'Fix bug #3' when there is one, else 'Fix bug'). Nothing found: the closest ids and titles.
`;

/** `--help` text of a command that deletes or renames: only an exact name is acted on. */
export const EXACT_NAME_HELP = `
How a session is found: an exact id, else the one id that starts with what you gave (several:
refused, with them listed), else the session titled exactly that. A title is never taken to mean
the newest of its lineage here: when only 'Fix bug #2', 'Fix bug #3' … exist, 'Fix bug' is
refused (exit 1) with them listed; give the id or the exact title.
`;

/** Candidates listed in an "ambiguous" or "no match" error. */
const SHOWN = 5;

/** The first {@link SHOWN} labels, comma-separated, and how many more there are. */
function shortList(labels: readonly string[]): string {
  const more = labels.length > SHOWN ? ` (+${labels.length - SHOWN} more)` : "";
  return `${labels.slice(0, SHOWN).join(", ")}${more}`;
}

/**
 * Finds the session a reading command means, as the reference's CLI does: an exact id, else a
 * unique id prefix, else a title (the newest session of that title's lineage, `X` → `X #3`).
 * A prefix several ids start with is reported as ambiguous, with the ids; anything else that
 * matches nothing suggests the closest ids and titles. Both are one line.
 */
export async function resolveSession(store: SessionStore, ref: string): Promise<string> {
  const byId = await resolveId(store, ref);
  if (byId !== null) return byId;
  const byTitle = await store.resolveSessionByTitle(ref);
  if (byTitle !== null) return byTitle;
  const known = store.backend.kind === "sqlite" ? knownSessions(store.backend.path) : [];
  const prefixed = known.filter((s) => s.id.startsWith(ref));
  if (prefixed.length > 1) {
    throw new CliError(
      `'${ref}' is ambiguous: ${countOf(prefixed.length, "session")} start with it (give more of the id); ` +
        `did you mean ${shortList(prefixed.map((s) => s.id))}?`,
    );
  }
  const hints = closestSessions(known, ref);
  const hint = hints.length > 0 ? `; did you mean ${hints.join(", ")}?` : "";
  throw new CliError(`No session matches '${ref}'${hint}`);
}

/** An exact id or a unique id prefix; a blank reference is an error. */
async function resolveId(store: SessionStore, ref: string): Promise<string | null> {
  if (ref.trim() === "") throw new CliError("A session id, id prefix or title is required");
  return store.resolveSessionId(ref);
}

/** Lineage members listed when a name is refused as meaning several sessions. */
const LINEAGE_LOOKUPS = 50;

/**
 * Finds the session a command that deletes or renames acts on: an exact id, else a unique id
 * prefix, else the session titled exactly `ref`. Unlike {@link resolveSession}, a title is never
 * taken to mean the newest of its lineage: a name that only matches `ref #N` titles is refused
 * (exit 1) with those sessions listed, so the user names the one they mean.
 */
export async function resolveSessionExactly(store: SessionStore, ref: string): Promise<string> {
  const byId = await resolveId(store, ref);
  if (byId !== null) return byId;
  const exact = await store.getSessionByTitle(ref);
  if (exact !== null) return exact.id;
  const newest = await store.resolveSessionByTitle(ref);
  if (newest === null) return resolveSession(store, ref);
  const members = await lineageMembers(store, ref, newest);
  throw new CliError(
    `No session is titled exactly '${ref}', and it names a lineage of ${countOf(members.length, "session")}: ` +
      `${shortList(members.map((s) => `'${s.title}' (${s.id})`))}; give the id or the exact title of the one you mean`,
  );
}

/**
 * The sessions titled `<base> #N`, newest number first, found through the store's API (so on
 * every backend): the numbers below the lineage's next one, plus `newest` (a variant differing
 * in letter case, which the lineage lookup matches and the exact lookup does not).
 */
async function lineageMembers(store: SessionStore, base: string, newest: string): Promise<KnownSession[]> {
  const next = /#(\d+)$/.exec(await store.getNextTitleInLineage(base));
  const top = next === null ? 1 : Number(next[1]) - 1;
  const found: KnownSession[] = [];
  for (let n = top; n >= 2 && found.length < LINEAGE_LOOKUPS; n--) {
    const row = await store.getSessionByTitle(`${base} #${n}`);
    if (row !== null) found.push({ id: row.id, title: row.title });
  }
  if (!found.some((s) => s.id === newest)) {
    found.unshift({ id: newest, title: await store.getSessionTitle(newest) });
  }
  return found;
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
  let file: ReadOnlyDatabase | undefined;
  try {
    // Read-only and without a trace (the command may be reading another user's live file).
    file = openReadOnlyDatabase(path);
    return file.db
      .prepare("SELECT id, title FROM sessions ORDER BY started_at DESC, id DESC LIMIT 5000")
      .all() as KnownSession[];
  } catch {
    return [];
  } finally {
    file?.close();
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
