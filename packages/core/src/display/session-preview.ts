import { previewOf } from "../listing/preview.js";
import type { SessionStore } from "../session-store.js";
import { sessionDisplayName } from "./session-display-name.js";

/** Messages read at most to find the first user message (it is nearly always the first or second). */
const PREVIEW_SCAN = 200;

/**
 * The preview of one session, as listings carry it (`previewOf` of the first user message with
 * text), for a reader that has the session but not a listing row: a search hit, a session page.
 * `""` when none of its first 200 messages is a user message with text.
 *
 * @example sessionDisplayName({ title, preview: await sessionPreview(store, id) })
 */
export async function sessionPreview(store: SessionStore, sessionId: string): Promise<string> {
  for await (const m of store.iterMessages(sessionId, { limit: PREVIEW_SCAN, pageSize: 50 })) {
    if (m.role === "user" && m.content !== null) return previewOf(m.content);
  }
  return "";
}

/**
 * The display name of one session read from a store (`sessionDisplayName` of its title, else
 * of its {@link sessionPreview}), for readers that name sessions one at a time: search hits,
 * `follow`. Given the session's row (`id` and `title`), only an untitled session costs a read.
 * `null` when there is no such session.
 */
export async function readSessionName(
  store: SessionStore,
  session: string | { id: string; title: string | null },
): Promise<string | null> {
  const row = typeof session === "string" ? await store.getSession(session) : session;
  if (row === null) return null;
  // The same test as sessionDisplayName's: a title of whitespace alone is no title.
  if (row.title !== null && row.title.trim() !== "") return sessionDisplayName(row);
  return sessionDisplayName({ title: null, preview: await sessionPreview(store, row.id) });
}
