import { MESSAGE_VIEW_KEYS, SESSION_VIEW_KEYS, type SessionStore } from "@hermes/core";
import { describe, expect, it } from "vitest";
import type { ContractSuite } from "../harness.js";

const UID = "0123456789abcdef0123456789abcdef";

/** A portable session the way a newer agent's export carries one (flags, uids, view states). */
function agentSession(id: string, flags: Record<string, unknown>, messages: Array<Record<string, unknown>>) {
  return {
    id,
    source: "cli",
    started_at: 1_767_225_600,
    message_count: 1,
    created_source: "cli",
    ...flags,
    messages: messages.map((m, i) => ({
      session_id: id,
      role: "user",
      timestamp: 1_767_225_601 + i,
      ...m,
    })),
  };
}

async function listedIds(store: SessionStore): Promise<string[]> {
  return (await store.listSessionsRich({ limit: 100, includeChildren: true })).map((s) => s.id);
}

/**
 * The read model (`SessionViewFields`, `MessageViewFields` of `@hermes/core`): rows written
 * through the API carry none of its keys (a v11-shaped store: absent, never guessed); an import
 * of a newer agent's sessions either keeps their fields or says what it left out, and never
 * lists a hidden session or shows a superseded row.
 */
export const readModelSuite: ContractSuite = (backend) => {
  describe(`read model of newer agents' files [${backend.name}]`, () => {
    it("rows written through the API carry no read-model key", async () => {
      const store = await backend.open();
      await store.createSession({ id: "s1", source: "cli" });
      await store.appendMessage({ sessionId: "s1", role: "user", content: "hello read model" });
      const session = await store.getSession("s1");
      const listed = (await store.listSessionsRich())[0];
      const page = (await store.listSessionPage()).sessions[0];
      const message = (await store.getMessages("s1"))[0];
      const hit = (await store.searchMessages("hello"))[0];
      for (const key of SESSION_VIEW_KEYS) {
        expect(session).not.toHaveProperty(key);
        expect(listed).not.toHaveProperty(key);
        expect(page).not.toHaveProperty(key);
      }
      for (const key of MESSAGE_VIEW_KEYS) expect(message).not.toHaveProperty(key);
      expect(hit).not.toHaveProperty("message_uid");
    });

    it("an import of a newer agent's sessions keeps their fields or says what it left out; hidden stays hidden", async () => {
      const store = await backend.open();
      const report = await store.importSessions([
        agentSession("kept", { pinned: true, archived: false, hidden: false }, [
          { id: 1, content: "first", message_uid: UID, view_state: "active", compressed_summary: false },
          { id: 2, content: "rewound", view_state: "superseded", compressed_summary: false },
        ]),
        agentSession("secret", { pinned: false, archived: false, hidden: true }, [
          { id: 3, content: "private", view_state: "active" },
        ]),
      ]);
      expect(report.conflicts).toEqual([]);
      expect(await listedIds(store)).toEqual(["kept"]);
      const shown = await store.getMessages("kept");
      expect(shown.map((m) => m.content)).toEqual(["first"]);
      if (Object.keys(report.leftOut).length === 0) {
        // The store holds every field: the hidden session is there, out of default listings.
        expect(report.skipped).toEqual([]);
        expect(await store.getSession("secret")).toMatchObject({ hidden: true });
        expect(await store.getSession("kept")).toMatchObject({ pinned: true, created_source: "cli" });
        expect(shown[0]).toMatchObject({ message_uid: UID, view_state: "active", compressed_summary: false });
      } else {
        expect(report.skipped).toEqual([{ id: "secret", line: 2, reason: "hidden" }]);
        expect(await store.getSession("secret")).toBeNull();
        expect(report.leftOut).toMatchObject({
          "messages.superseded": 1,
          "messages.message_uid": 1,
          "sessions.pinned": 1,
          "sessions.created_source": 1,
        });
        expect(await store.getSession("kept")).not.toHaveProperty("pinned");
      }
      const again = await store.importSessions([
        agentSession("kept", { pinned: true, archived: false, hidden: false }, [
          { id: 1, content: "first", message_uid: UID, view_state: "active", compressed_summary: false },
          { id: 2, content: "rewound", view_state: "superseded", compressed_summary: false },
        ]),
      ]);
      expect(again).toMatchObject({ sessionsImported: 0, sessionsUnchanged: 1, conflicts: [] });
    });
  });
};
