// What an import leaves out of a session: flagged sessions, and what the target cannot hold.
import type { PortableSession } from "./jsonl-format.js";
import { MESSAGE_VIEW_COLUMNS, SESSION_VIEW_COLUMNS } from "./jsonl-format.js";
import type { ImportCapacity, ImportSkipReason } from "./run-import.js";

/**
 * Why an import skips a session, or `null` to import it: hidden (unless `includeHidden`), then
 * archived by the user or the stale sweep (unless `includeArchived`), each only where the store
 * cannot hold the flag (`capacity`): it would list such a session. A store that holds the flags
 * (PostgreSQL) takes every session and leaves flagged ones out of its listings itself.
 */
export function skipReason(
  s: PortableSession,
  o: { includeArchived: boolean; includeHidden: boolean },
  capacity?: ImportCapacity,
): ImportSkipReason | null {
  const holds = (field: string) => capacity?.sessionFields.has(field) === true;
  if (!o.includeHidden && s.hidden === true && !holds("hidden")) return "hidden";
  if (!o.includeArchived && s.archived === true && !holds("archived")) return "archived";
  if (!o.includeArchived && s.auto_archived === true && !holds("auto_archived")) return "archived";
  return null;
}

/** Whether a read-model value carries information a store would lose (a set flag, a uid, …). */
function carries(name: string, value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (name === "view_state") return value !== "active";
  if (name === "rewind_count") return value !== 0;
  return true;
}

function count(leftOut: Record<string, number>, key: string, n = 1): void {
  leftOut[key] = (leftOut[key] ?? 0) + n;
}

/**
 * The session as `capacity` can hold it: read-model fields it does not store removed (each one
 * that carried information counted in `leftOut` as `sessions.<name>`/`messages.<name>`) and,
 * without `view_state`, superseded rows left out (`messages.superseded`), since such a store
 * would show them. Returns `s` itself when nothing is left out.
 */
export function fitToCapacity(
  s: PortableSession,
  capacity: ImportCapacity | undefined,
  leftOut: Record<string, number>,
): PortableSession {
  const sessionFields = capacity?.sessionFields ?? new Set<string>();
  const messageFields = capacity?.messageFields ?? new Set<string>();
  const dropSession = SESSION_VIEW_COLUMNS.filter((c) => !sessionFields.has(c.name) && c.name in s);
  const dropMessage = MESSAGE_VIEW_COLUMNS.filter((c) => !messageFields.has(c.name));
  const keepsState = messageFields.has("view_state");
  if (dropSession.length === 0 && !s.messages.some((m) => dropMessage.some((c) => c.name in m))) return s;
  const out: Record<string, unknown> = { ...s };
  for (const c of dropSession) {
    if (carries(c.name, out[c.name])) count(leftOut, `sessions.${c.name}`);
    delete out[c.name];
  }
  const messages = [];
  for (const m of s.messages) {
    if (!keepsState && m.view_state === "superseded") {
      count(leftOut, "messages.superseded");
      continue;
    }
    const copy: Record<string, unknown> = { ...m };
    for (const c of dropMessage) {
      if (!(c.name in copy)) continue;
      if (carries(c.name, copy[c.name])) count(leftOut, `messages.${c.name}`);
      delete copy[c.name];
    }
    messages.push(copy);
  }
  out.messages = messages;
  return out as unknown as PortableSession;
}
