import type { SessionRow } from "../api.js";

/** A mark of a newer agent's session, with the words a badge's title explains it in. */
const MARKS = [
  { key: "pinned", label: "pinned", title: "Pinned: the agent never prunes it" },
  { key: "auto_archived", label: "auto-archived", title: "Archived by the agent's stale-session sweep" },
  { key: "archived", label: "archived", title: "Archived by the user" },
  { key: "hidden", label: "hidden", title: "Hidden from the agent's listings" },
] as const;

/**
 * The marks of a session: pinned, archived (by the user) or auto-archived (by the agent's
 * sweep, which sets both flags: shown once), hidden. Nothing for a session without flags
 * (every session of a v11 file).
 */
export function SessionMarks({
  session,
}: {
  session: Pick<SessionRow, "pinned" | "archived" | "auto_archived" | "hidden">;
}) {
  const shown = MARKS.filter(
    (m) => session[m.key] === true && !(m.key === "archived" && session.auto_archived === true),
  );
  return (
    <>
      {shown.map((m) => (
        <span key={m.key} class={`badge mark mark-${m.label}`} title={m.title}>
          {m.label}
        </span>
      ))}
    </>
  );
}
