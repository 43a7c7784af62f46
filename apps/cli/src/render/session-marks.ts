/**
 * The visibility flags a newer agent's file keeps on a session (absent on a v11 file, `null`
 * where the column holds NULL): what `list` and `show` mark a session with.
 */
interface SessionFlags {
  pinned?: boolean | null;
  archived?: boolean | null;
  auto_archived?: boolean | null;
  hidden?: boolean | null;
}

/** Whether a session is pinned (the agent never prunes it). */
export function isPinned(row: object): boolean {
  return (row as SessionFlags).pinned === true;
}

/**
 * The marks of a session, in the order the agent's UI weighs them: `pinned`, `archived` (by
 * the user) or `auto-archived` (by the agent's stale sweep), `hidden`. Empty for a session
 * without flags (every session of a v11 file).
 */
export function sessionMarks(row: object): string[] {
  const f = row as SessionFlags;
  const marks: string[] = [];
  if (f.pinned === true) marks.push("pinned");
  if (f.auto_archived === true) marks.push("auto-archived");
  else if (f.archived === true) marks.push("archived");
  if (f.hidden === true) marks.push("hidden");
  return marks;
}
