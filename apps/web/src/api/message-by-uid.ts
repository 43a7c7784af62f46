import type { SessionStore } from "@hermes/core";

/**
 * The displayed row that is the current version of message `uid` in a session (a newer
 * agent's file, v31: every copy of a logical message keeps its uid), or `null`: the active row
 * when there is one, else the last displayed row with that uid. Reads the session's messages
 * page by page, stopping at the active row.
 */
export async function currentRowOfUid(
  store: SessionStore,
  sessionId: string,
  uid: string,
): Promise<number | null> {
  let found: number | null = null;
  for await (const m of store.iterMessages(sessionId)) {
    if (m.message_uid !== uid) continue;
    found = m.id;
    if (m.view_state === "active") break;
  }
  return found;
}
