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
 * `follow`. `null` when there is no such session.
 */
export async function readSessionName(store: SessionStore, sessionId: string): Promise<string | null> {
  const session = await store.getSession(sessionId);
  if (session === null) return null;
  if (session.title !== null && session.title.trim() !== "") return sessionDisplayName(session);
  return sessionDisplayName({ title: null, preview: await sessionPreview(store, sessionId) });
}
