import type { HermesStoreError } from "@hermes/core";
import { describe, expect, it } from "vitest";
import type { ContractSuite } from "../harness.js";

/**
 * Writes issued concurrently from one process (a gateway serving many chats): every write
 * applied once and in call order per caller, a failing write rejecting only itself, and the
 * all-or-none batch `appendMessages`. How a backend batches them is its own business.
 */
export const concurrentWritesSuite: ContractSuite = (backend) => {
  describe(`concurrent writes [${backend.name}]`, () => {
    it("applies every concurrent append once, in call order per caller, with counters to match", async () => {
      const store = await backend.open();
      const sessions = ["a", "b", "c"];
      for (const id of sessions) await store.createSession({ id, source: "gateway" });
      const callers = 60;
      await Promise.all(
        Array.from({ length: callers }, async (_, c) => {
          for (let i = 0; i < 4; i++) {
            await store.appendMessage({
              sessionId: sessions[c % 3] as string,
              role: "user",
              content: `${c}:${i}`,
            });
          }
        }),
      );
      expect(await store.messageCount()).toBe(callers * 4);
      for (const id of sessions) {
        const rows = await store.getMessages(id);
        expect((await store.getSession(id))?.message_count).toBe(rows.length);
        const order = new Map<string, string[]>();
        for (const row of rows) {
          const [c, i] = String(row.content).split(":");
          order.set(c as string, [...(order.get(c as string) ?? []), i as string]);
        }
        for (const writes of order.values()) expect(writes).toEqual(["0", "1", "2", "3"]);
      }
    });

    it("fire-and-forget writes from one caller apply in call order", async () => {
      const store = await backend.open();
      await store.createSession({ id: "s", source: "gateway" });
      const pending = Array.from({ length: 50 }, (_, i) =>
        store.appendMessage({ sessionId: "s", role: "user", content: `m${i}` }),
      );
      const ids = await Promise.all(pending);
      expect([...ids].sort((x, y) => x - y)).toEqual(ids);
      expect((await store.getMessages("s")).map((m) => m.content)).toEqual(
        Array.from({ length: 50 }, (_, i) => `m${i}`),
      );
    });

    it("a failing write among concurrent ones rejects alone", async () => {
      const store = await backend.open();
      await store.createSession({ id: "s", source: "gateway" });
      const results = await Promise.allSettled([
        store.appendMessage({ sessionId: "s", role: "user", content: "one" }),
        store.appendMessage({ sessionId: "ghost", role: "user", content: "lost" }),
        store.appendMessage({ sessionId: "s", role: "user", content: "two" }),
      ]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect(((results[1] as PromiseRejectedResult).reason as HermesStoreError).code).toBe(
        "SESSION_NOT_FOUND",
      );
      expect((await store.getMessages("s")).map((m) => m.content)).toEqual(["one", "two"]);
      expect((await store.getSession("s"))?.message_count).toBe(2);
    });

    it("appendMessages writes a batch all or none and returns ids in order", async () => {
      const store = await backend.open();
      await store.createSession({ id: "s", source: "gateway" });
      const ids = await store.appendMessages([
        { sessionId: "s", role: "user", content: "q" },
        { sessionId: "s", role: "assistant", content: "a", toolCalls: [{ id: "c1" }] },
      ]);
      expect(ids).toHaveLength(2);
      expect((await store.getMessages("s")).map((m) => m.id)).toEqual(ids);
      const error = await store
        .appendMessages([
          { sessionId: "s", role: "user", content: "kept?" },
          { sessionId: "ghost", role: "user", content: "no" },
        ])
        .then(
          () => null,
          (e: HermesStoreError) => e,
        );
      expect(error?.code).toBe("SESSION_NOT_FOUND");
      expect(await store.messageCount({ sessionId: "s" })).toBe(2);
      expect(await store.getSession("s")).toMatchObject({ message_count: 2, tool_call_count: 1 });
      expect(await store.appendMessages([])).toEqual([]);
    });
  });
};
