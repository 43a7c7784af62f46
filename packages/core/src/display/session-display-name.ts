/** The name of a session that has neither a title nor a user message with text. */
export const UNTITLED_SESSION = "(untitled)";

/** What {@link sessionDisplayName} reads of a session (a row of any listing, or a session plus its preview). */
export interface NameableSession {
  title: string | null;
  /** The start of its first user message (`previewOf`); absent or empty when unknown or none. */
  preview?: string | null;
}

/** Runs of whitespace (newlines, tabs, the separators foreign writers leave) become one space. */
const oneLine = (text: string) => text.replace(/\s+/gu, " ").trim();

/**
 * The one name of a session, the same in the CLI and the web: its title; else the preview of
 * its first user message (as `listSessionsRich` cuts it: 60 characters and "..."); else
 * "(untitled)". Always one line. The id is never the name: where the id matters, a reader
 * shows it beside the name, once. A row that stands for a compression chain (the CLI's `list`,
 * the web's Sessions page) is named after the chain's first session, the one the user started
 * and titled; each part keeps its own title ("Fix Docker Build #2") where it is shown alone.
 *
 * @example sessionDisplayName({ title: "Fix Docker Build" }) // "Fix Docker Build"
 * @example sessionDisplayName({ title: null, preview: "why does\nthe build fail" }) // "why does the build fail"
 * @example sessionDisplayName({ title: null }) // "(untitled)"
 */
export function sessionDisplayName(session: NameableSession): string {
  const title = oneLine(session.title ?? "");
  if (title !== "") return title;
  const preview = oneLine(session.preview ?? "");
  return preview !== "" ? preview : UNTITLED_SESSION;
}
