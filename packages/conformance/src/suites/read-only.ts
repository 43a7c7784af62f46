import { HermesStoreError, type SessionStore } from "@hermes/core";
import { describe, expect, it } from "vitest";
import { type ContractSuite, manualClock } from "../harness.js";

/** Everything a store holds that a write could change, as one value to compare. */
async function contents(store: SessionStore) {
  const sessions = [];
  for await (const s of store.exportStream()) sessions.push(s);
  return { sessions, meta: await store.getMeta("k"), count: await store.sessionCount() };
}

/**
 * Every write method of `SessionStore`, each with arguments that would change `s1`'s store if
 * it were writable (so a refusal cannot be mistaken for a no-op).
 */
function writes(store: SessionStore, portable: unknown): Array<[string, () => Promise<unknown>]> {
  const message = { sessionId: "s1", role: "user", content: "refused" };
  return [
    ["createSession", () => store.createSession({ id: "s2", source: "cli" })],
    ["ensureSession", () => store.ensureSession({ id: "s3" })],
    ["endSession", () => store.endSession("s1", "done")],
    ["reopenSession", () => store.reopenSession("ended")],
    ["updateSystemPrompt", () => store.updateSystemPrompt("s1", "changed")],
    ["updateTokenCounts", () => store.updateTokenCounts("s1", { inputTokens: 5 })],
    ["setSessionTitle", () => store.setSessionTitle("s1", "Other")],
    ["appendMessage", () => store.appendMessage(message)],
    ["appendMessages", () => store.appendMessages([message, message])],
    ["clearMessages", () => store.clearMessages("s1")],
    ["rebuildSearchIndex", () => store.rebuildSearchIndex()],
    ["deleteSession", () => store.deleteSession("s1")],
    ["pruneSessions", () => store.pruneSessions({ olderThanDays: 0 })],
    ["setMeta", () => store.setMeta("k", "changed")],
    ["vacuum", () => store.vacuum()],
    [
      "maybeAutoPruneAndVacuum",
      () => store.maybeAutoPruneAndVacuum({ retentionDays: 0, minIntervalHours: 0 }),
    ],
    ["importSessions", () => store.importSessions([portable as never])],
    ["forkSession", () => store.forkSession("s1")],
  ];
}

/** `readOnly`, `readOnlyReason`, and a read-only store on existing data (the target's `openReadOnly`). */
export const readOnlySuite: ContractSuite = (backend) => {
  describe(`read-only access [${backend.name}]`, () => {
    it("a store opened for writing is not read-only and gives no reason", async () => {
      const store = await backend.open();
      expect(store.readOnly).toBe(false);
      expect(store.readOnlyReason).toBeNull();
    });

    const openReadOnly = backend.openReadOnly;
    describe.runIf(openReadOnly !== undefined)("a store opened read-only on existing data", () => {
      async function seeded() {
        const clock = manualClock();
        const writer = await backend.open({ clock });
        await writer.createSession({ id: "s1", source: "cli", systemPrompt: "kept" });
        await writer.appendMessage({ sessionId: "s1", role: "user", content: "read me only" });
        await writer.appendMessage({ sessionId: "s1", role: "assistant", content: "only reading" });
        await writer.setSessionTitle("s1", "Kept");
        await writer.createSession({ id: "ended", source: "cli" });
        await writer.endSession("ended", "done");
        await writer.setMeta("k", "v");
        clock.advance(200 * 86_400);
        const reader = await (openReadOnly as NonNullable<typeof openReadOnly>)(writer);
        return { writer, reader };
      }

      it("says so, with a reason, and serves the reads the writer would", async () => {
        const { writer, reader } = await seeded();
        expect(reader.readOnly).toBe(true);
        expect(reader.readOnlyReason).toEqual(expect.any(String));
        expect(reader.readOnlyReason?.length).toBeGreaterThan(0);
        expect(await reader.getMessages("s1")).toEqual(await writer.getMessages("s1"));
        expect((await reader.getMessages("s1")).map((m) => m.content)).toEqual([
          "read me only",
          "only reading",
        ]);
        expect((await reader.searchMessages("reading")).map((h) => [h.session_id, h.role])).toEqual([
          ["s1", "assistant"],
        ]);
        expect((await reader.listSessionsRich()).map((r) => [r.id, r.title])).toEqual(
          (await writer.listSessionsRich()).map((r) => [r.id, r.title]),
        );
        expect(await reader.getSessionByTitle("Kept")).toEqual(await writer.getSession("s1"));
        expect(await reader.getMeta("k")).toBe("v");
      });

      it("rejects every write method with STORE_READ_ONLY, and nothing changes", async () => {
        const { writer, reader } = await seeded();
        const before = await contents(writer);
        // A valid new session for importSessions: s1's rows under another id, without its title.
        const s1 = before.sessions.find((s) => s.id === "s1");
        const portable = {
          ...s1,
          id: "imported",
          title: null,
          messages: s1?.messages.map((m) => ({ ...m, id: null, session_id: "imported" })),
        };
        for (const [name, write] of writes(reader, portable)) {
          const error = await write().then(
            () => null,
            (e: unknown) => e,
          );
          expect(error, name).toBeInstanceOf(HermesStoreError);
          expect((error as HermesStoreError).code, name).toBe("STORE_READ_ONLY");
        }
        expect(await contents(writer)).toEqual(before);
        expect(await contents(reader)).toEqual(before);
      });
    });
  });
};
