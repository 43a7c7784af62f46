import type { HermesStoreError, SessionStore } from "@hermes/core";
import { describe, expect, it } from "vitest";
import { type ContractSuite, manualClock, rejection } from "../harness.js";

/** The error a promise rejects with (fails the test when it resolves). */
async function counters(store: SessionStore, id: string) {
  const s = await store.getSession(id);
  return { message_count: s?.message_count, tool_call_count: s?.tool_call_count };
}

const call = (id: string) => ({ id, type: "function", function: { name: "terminal", arguments: "{}" } });

/** appendMessage, getMessages, clearMessages (SPEC §5 "Messages"). */
export const messagesSuite: ContractSuite = (backend) => {
  describe(`messages [${backend.name}]`, () => {
    it("appends rows with every column and returns increasing ids", async () => {
      const clock = manualClock();
      const store = await backend.open({ clock });
      await store.createSession({ id: "s1", source: "cli" });
      const a = await store.appendMessage({ sessionId: "s1", role: "user", content: "hello" });
      const b = await store.appendMessage({
        sessionId: "s1",
        role: "assistant",
        content: "hi",
        toolCalls: [call("c1")],
        tokenCount: 42,
        finishReason: "tool_calls",
        reasoning: "think",
        reasoningContent: "raw thoughts",
        reasoningDetails: [{ type: "summary", text: "x" }],
        codexReasoningItems: [{ id: "r1" }],
        codexMessageItems: { id: "m1" },
      });
      const c = await store.appendMessage({
        sessionId: "s1",
        role: "tool",
        content: "ok",
        toolCallId: "c1",
        toolName: "terminal",
      });
      expect(b).toBeGreaterThan(a);
      expect(c).toBeGreaterThan(b);
      const rows = await store.getMessages("s1");
      expect(rows.map((r) => r.id)).toEqual([a, b, c]);
      expect(rows[1]).toEqual({
        id: b,
        session_id: "s1",
        role: "assistant",
        content: "hi",
        tool_call_id: null,
        tool_calls: [call("c1")],
        tool_name: null,
        timestamp: expect.any(Number),
        token_count: 42,
        finish_reason: "tool_calls",
        reasoning: "think",
        reasoning_content: "raw thoughts",
        // Only tool_calls is parsed by getMessages; the other JSON columns come back as text.
        reasoning_details: JSON.stringify([{ type: "summary", text: "x" }]),
        codex_reasoning_items: JSON.stringify([{ id: "r1" }]),
        codex_message_items: JSON.stringify({ id: "m1" }),
      });
      expect(rows[2]).toMatchObject({
        role: "tool",
        tool_call_id: "c1",
        tool_name: "terminal",
        tool_calls: null,
      });
      expect(rows[0]).toMatchObject({
        content: "hello",
        tool_calls: null,
        token_count: null,
        finish_reason: null,
        reasoning: null,
        reasoning_content: null,
        reasoning_details: null,
        codex_reasoning_items: null,
        codex_message_items: null,
      });
    });

    it("stamps the timestamp from the clock at write time", async () => {
      const clock = manualClock(1_800_000_000);
      const store = await backend.open({ clock });
      await store.createSession({ id: "s1", source: "cli" });
      clock.set(1_800_000_500);
      await store.appendMessage({ sessionId: "s1", role: "user", content: "x" });
      const [row] = await store.getMessages("s1");
      expect(row?.timestamp).toBeGreaterThan(1_800_000_500);
      expect(row?.timestamp).toBeLessThan(1_800_000_501);
    });

    it("orders by timestamp, then id (not by insertion)", async () => {
      const clock = manualClock(1_800_000_000);
      const store = await backend.open({ clock });
      await store.createSession({ id: "s1", source: "cli" });
      clock.set(1_800_000_100);
      await store.appendMessage({ sessionId: "s1", role: "user", content: "late" });
      clock.set(1_800_000_050);
      await store.appendMessage({ sessionId: "s1", role: "user", content: "early" });
      expect((await store.getMessages("s1")).map((m) => m.content)).toEqual(["early", "late"]);
    });

    it("breaks timestamp ties by id", async () => {
      const store = await backend.open({ clock: () => 1_800_000_000 });
      await store.createSession({ id: "s1", source: "cli" });
      for (const content of ["one", "two", "three"]) {
        await store.appendMessage({ sessionId: "s1", role: "user", content });
      }
      const rows = await store.getMessages("s1");
      expect(rows.map((m) => m.content)).toEqual(["one", "two", "three"]);
      expect(new Set(rows.map((m) => m.timestamp)).size).toBe(1);
    });

    it("counts messages and tool calls as the reference", async () => {
      const store = await backend.open({ clock: manualClock() });
      await store.createSession({ id: "s1", source: "cli" });
      await store.appendMessage({ sessionId: "s1", role: "user", content: "go" });
      expect(await counters(store, "s1")).toEqual({ message_count: 1, tool_call_count: 0 });
      // A list counts its length.
      await store.appendMessage({ sessionId: "s1", role: "assistant", toolCalls: [call("a"), call("b")] });
      expect(await counters(store, "s1")).toEqual({ message_count: 2, tool_call_count: 2 });
      // An empty list adds 0 (and is stored as NULL).
      await store.appendMessage({ sessionId: "s1", role: "assistant", content: "x", toolCalls: [] });
      expect(await counters(store, "s1")).toEqual({ message_count: 3, tool_call_count: 2 });
      // A dict counts as one call.
      await store.appendMessage({ sessionId: "s1", role: "assistant", toolCalls: call("c") });
      expect(await counters(store, "s1")).toEqual({ message_count: 4, tool_call_count: 3 });
      // Even an empty dict: it is "not None" for the counter, falsy for the JSON column.
      await store.appendMessage({ sessionId: "s1", role: "assistant", content: "y", toolCalls: {} });
      expect(await counters(store, "s1")).toEqual({ message_count: 5, tool_call_count: 4 });
      // A tool result row is not a call.
      await store.appendMessage({
        sessionId: "s1",
        role: "tool",
        content: "out",
        toolCallId: "a",
        toolName: "t",
      });
      expect(await counters(store, "s1")).toEqual({ message_count: 6, tool_call_count: 4 });
      // null/absent toolCalls add 0.
      await store.appendMessage({ sessionId: "s1", role: "assistant", content: "z", toolCalls: null });
      expect(await counters(store, "s1")).toEqual({ message_count: 7, tool_call_count: 4 });
      // The count follows tool_calls, never the role (the reference's code ignores the role).
      await store.appendMessage({ sessionId: "s1", role: "tool", toolCalls: [call("d")] });
      expect(await counters(store, "s1")).toEqual({ message_count: 8, tool_call_count: 5 });
      expect(await store.messageCount({ sessionId: "s1" })).toBe(8);

      const stored = await store.getMessages("s1");
      expect(stored[2]?.tool_calls).toBeNull();
      expect(stored[3]?.tool_calls).toEqual(call("c"));
      expect(stored[4]?.tool_calls).toBeNull();
    });

    it("stores JSON columns only when truthy, and strings as given", async () => {
      const store = await backend.open({ clock: manualClock() });
      await store.createSession({ id: "s1", source: "cli" });
      const falsy: unknown[] = [[], {}, "", 0, false, null, undefined];
      for (const value of falsy) {
        await store.appendMessage({
          sessionId: "s1",
          role: "assistant",
          content: "c",
          reasoningDetails: value,
          codexReasoningItems: value,
          codexMessageItems: value,
        });
      }
      for (const row of await store.getMessages("s1")) {
        expect(row.reasoning_details).toBeNull();
        expect(row.codex_reasoning_items).toBeNull();
        expect(row.codex_message_items).toBeNull();
      }
      await store.clearMessages("s1");
      await store.appendMessage({
        sessionId: "s1",
        role: "assistant",
        content: "",
        reasoning: "",
        reasoningContent: "",
        reasoningDetails: "text",
        codexReasoningItems: 7,
        codexMessageItems: [null],
      });
      const [row] = await store.getMessages("s1");
      // Plain strings are bound as they are: "" stays "", never NULL.
      expect(row?.content).toBe("");
      expect(row?.reasoning).toBe("");
      expect(row?.reasoning_content).toBe("");
      expect(JSON.parse(row?.reasoning_details ?? "null")).toBe("text");
      expect(JSON.parse(row?.codex_reasoning_items ?? "null")).toBe(7);
      expect(JSON.parse(row?.codex_message_items ?? "null")).toEqual([null]);
    });

    it("round-trips non-ASCII and nested tool calls", async () => {
      const store = await backend.open({ clock: manualClock() });
      await store.createSession({ id: "s1", source: "cli" });
      const calls = [
        { id: "c", function: { name: "写", arguments: JSON.stringify({ text: "日本語 ✓ \u{1F600}" }) } },
      ];
      await store.appendMessage({ sessionId: "s1", role: "assistant", content: "记忆 🚀", toolCalls: calls });
      const [row] = await store.getMessages("s1");
      expect(row?.content).toBe("记忆 🚀");
      expect(row?.tool_calls).toEqual(calls);
    });

    it("rejects an unknown session with SESSION_NOT_FOUND and writes nothing", async () => {
      const store = await backend.open({ clock: manualClock() });
      await store.createSession({ id: "s1", source: "cli" });
      const error = await rejection(
        store.appendMessage({ sessionId: "ghost", role: "user", content: "x", toolCalls: [call("a")] }),
      );
      expect(error.code).toBe("SESSION_NOT_FOUND");
      expect((error as HermesStoreError & { sessionId?: string }).sessionId).toBe("ghost");
      expect(await store.messageCount()).toBe(0);
      expect(await store.getSession("ghost")).toBeNull();
      expect(await store.sessionCount()).toBe(1);
      expect(await counters(store, "s1")).toEqual({ message_count: 0, tool_call_count: 0 });
      // The store keeps working after the failed write.
      await store.appendMessage({ sessionId: "s1", role: "user", content: "y" });
      expect(await store.messageCount()).toBe(1);
    });

    it.each([
      ["an empty session id", { sessionId: "", role: "user" }],
      ["an empty role", { sessionId: "s1", role: "" }],
      ["a numeric content", { sessionId: "s1", role: "user", content: 5 }],
      ["string tool calls", { sessionId: "s1", role: "assistant", toolCalls: "[]" }],
      ["a fractional token count", { sessionId: "s1", role: "assistant", tokenCount: 1.5 }],
      ["a BigInt in reasoning details", { sessionId: "s1", role: "assistant", reasoningDetails: [1n] }],
      ["a function as codex items", { sessionId: "s1", role: "assistant", codexMessageItems: () => 1 }],
      ["a numeric tool name", { sessionId: "s1", role: "tool", toolName: 3 }],
    ])("rejects %s with INVALID_ARGUMENT and writes nothing", async (_name, input) => {
      const store = await backend.open({ clock: manualClock() });
      await store.createSession({ id: "s1", source: "cli" });
      const error = await rejection(store.appendMessage(input as never));
      expect(error.code).toBe("INVALID_ARGUMENT");
      expect(await store.messageCount()).toBe(0);
      expect(await counters(store, "s1")).toEqual({ message_count: 0, tool_call_count: 0 });
    });

    it("rejects a cyclic JSON value with INVALID_ARGUMENT", async () => {
      const store = await backend.open({ clock: manualClock() });
      await store.createSession({ id: "s1", source: "cli" });
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      const error = await rejection(
        store.appendMessage({ sessionId: "s1", role: "assistant", toolCalls: cyclic }),
      );
      expect(error.code).toBe("INVALID_ARGUMENT");
      expect(await store.messageCount()).toBe(0);
    });

    it("returns [] for a session without messages or an unknown one", async () => {
      const store = await backend.open({ clock: manualClock() });
      await store.createSession({ id: "s1", source: "cli" });
      expect(await store.getMessages("s1")).toEqual([]);
      expect(await store.getMessages("ghost")).toEqual([]);
      expect((await rejection(store.getMessages(""))).code).toBe("INVALID_ARGUMENT");
    });

    it("keeps sessions' messages apart", async () => {
      const store = await backend.open({ clock: manualClock() });
      await store.createSession({ id: "a", source: "cli" });
      await store.createSession({ id: "b", source: "cli" });
      await store.appendMessage({ sessionId: "a", role: "user", content: "for a" });
      await store.appendMessage({ sessionId: "b", role: "user", content: "for b" });
      await store.appendMessage({ sessionId: "a", role: "assistant", content: "again a" });
      expect((await store.getMessages("a")).map((m) => m.content)).toEqual(["for a", "again a"]);
      expect((await store.getMessages("b")).map((m) => m.content)).toEqual(["for b"]);
      expect(await store.messageCount()).toBe(3);
    });

    it("clearMessages deletes the messages, resets both counters, keeps tokens and costs", async () => {
      const store = await backend.open({ clock: manualClock() });
      await store.createSession({ id: "s1", source: "cli" });
      await store.createSession({ id: "s2", source: "cli" });
      await store.appendMessage({ sessionId: "s1", role: "user", content: "q" });
      await store.appendMessage({ sessionId: "s1", role: "assistant", toolCalls: [call("a"), call("b")] });
      await store.appendMessage({ sessionId: "s2", role: "user", content: "other" });
      await store.updateTokenCounts("s1", {
        inputTokens: 10,
        outputTokens: 5,
        estimatedCostUsd: 0.25,
        apiCallCount: 2,
      });
      await store.clearMessages("s1");
      expect(await store.getMessages("s1")).toEqual([]);
      const s1 = await store.getSession("s1");
      expect(s1).toMatchObject({
        message_count: 0,
        tool_call_count: 0,
        input_tokens: 10,
        output_tokens: 5,
        estimated_cost_usd: 0.25,
        api_call_count: 2,
      });
      expect((await store.getMessages("s2")).map((m) => m.content)).toEqual(["other"]);
      expect(await counters(store, "s2")).toEqual({ message_count: 1, tool_call_count: 0 });
      // The session is still usable, counters start again from 0.
      await store.appendMessage({ sessionId: "s1", role: "assistant", toolCalls: [call("c")] });
      expect(await counters(store, "s1")).toEqual({ message_count: 1, tool_call_count: 1 });
    });

    it("clearMessages on an unknown session is a no-op", async () => {
      const store = await backend.open({ clock: manualClock() });
      await store.createSession({ id: "s1", source: "cli" });
      await store.appendMessage({ sessionId: "s1", role: "user", content: "q" });
      await store.clearMessages("ghost");
      expect(await store.messageCount()).toBe(1);
      expect((await rejection(store.clearMessages(""))).code).toBe("INVALID_ARGUMENT");
    });
  });
};
