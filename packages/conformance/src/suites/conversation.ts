import type { AppendMessageInput, SessionStore } from "@hermes/core";
import { describe, expect, it } from "vitest";
import { type ContractSuite, manualClock, rejection } from "../harness.js";

const call = (id: string) => ({ id, type: "function", function: { name: "terminal", arguments: "{}" } });

const NOTE =
  "[System note: The following is recalled memory context, NOT new user input. " +
  "Treat as authoritative reference data — this is the agent's persistent memory and should inform all responses.]";
const BLOCK = `<memory-context>\n${NOTE}\n\nuser likes tea\n</memory-context>`;

/** Session `id` with `turns` appended in order. */
async function session(
  store: SessionStore,
  id: string,
  turns: Array<Omit<AppendMessageInput, "sessionId">>,
  parentSessionId?: string,
) {
  await store.createSession({ id, source: "cli", ...(parentSessionId ? { parentSessionId } : {}) });
  for (const t of turns) await store.appendMessage({ sessionId: id, ...t });
}

/** getMessagesAsConversation (SPEC §5 "Messages"). */
export const conversationSuite: ContractSuite = (backend) => {
  describe(`conversation replay [${backend.name}]`, () => {
    it("gives each role exactly the keys the reference sets", async () => {
      const store = await backend.open({ clock: manualClock() });
      await session(store, "s1", [
        { role: "system", content: "be brief" },
        { role: "user", content: "hello", tokenCount: 3, finishReason: "x" },
        {
          role: "assistant",
          content: null,
          toolCalls: [call("c1")],
          finishReason: "tool_calls",
          tokenCount: 9,
          reasoning: "think first",
          reasoningContent: "",
          reasoningDetails: [{ type: "summary", text: "s" }],
          codexReasoningItems: [{ id: "r" }],
          codexMessageItems: [{ id: "m" }],
        },
        { role: "tool", content: " done \n", toolCallId: "c1", toolName: "terminal" },
        { role: "assistant", content: "All good.", finishReason: "stop" },
      ]);
      const conv = await store.getMessagesAsConversation("s1");
      expect(conv).toStrictEqual([
        { role: "system", content: "be brief" },
        { role: "user", content: "hello" },
        {
          role: "assistant",
          content: null,
          tool_calls: [call("c1")],
          reasoning: "think first",
          reasoning_content: "",
          reasoning_details: [{ type: "summary", text: "s" }],
          codex_reasoning_items: [{ id: "r" }],
          codex_message_items: [{ id: "m" }],
        },
        // Only user/assistant content is cleaned and trimmed.
        { role: "tool", content: " done \n", tool_call_id: "c1", tool_name: "terminal" },
        { role: "assistant", content: "All good." },
      ]);
      // Key order as the reference builds the dict.
      expect(Object.keys(conv[2] ?? {})).toEqual([
        "role",
        "content",
        "tool_calls",
        "reasoning",
        "reasoning_content",
        "reasoning_details",
        "codex_reasoning_items",
        "codex_message_items",
      ]);
      for (const m of conv) {
        expect(m).not.toHaveProperty("finish_reason");
        expect(m).not.toHaveProperty("token_count");
        expect(m).not.toHaveProperty("timestamp");
      }
    });

    it("keeps reasoning fields on assistant turns only, with their own presence rules", async () => {
      const store = await backend.open({ clock: manualClock() });
      const reasoningEverywhere = {
        reasoning: "r",
        reasoningContent: "rc",
        reasoningDetails: [1],
        codexReasoningItems: [2],
        codexMessageItems: [3],
      };
      await session(store, "s1", [
        { role: "user", content: "u", ...reasoningEverywhere },
        { role: "tool", content: "t", ...reasoningEverywhere },
        // Empty reasoning is dropped, empty reasoning_content is kept; NULL drops both.
        { role: "assistant", content: "a1", reasoning: "", reasoningContent: "" },
        { role: "assistant", content: "a2", reasoning: null, reasoningContent: null },
        { role: "assistant", content: "a3", toolCalls: [], toolCallId: "", toolName: "" },
      ]);
      expect(await store.getMessagesAsConversation("s1")).toStrictEqual([
        { role: "user", content: "u" },
        { role: "tool", content: "t" },
        { role: "assistant", content: "a1", reasoning_content: "" },
        { role: "assistant", content: "a2" },
        { role: "assistant", content: "a3" },
      ]);
    });

    it("strips recalled-memory scaffolding from user and assistant content, then trims", async () => {
      const store = await backend.open({ clock: manualClock() });
      await session(store, "s1", [
        { role: "user", content: `${BLOCK}\n\nWhat should I drink?` },
        { role: "assistant", content: `  ${NOTE}\nTea.  ` },
        { role: "user", content: "a </memory-context> b <memory-context> c" },
        { role: "user", content: "< MEMORY-Context >secret</memory-CONTEXT  >kept" },
        {
          role: "user",
          content:
            "[system note: the following is recalled memory context,   not new user input. treat as informational background data.]  rest",
        },
        { role: "user", content: `${BLOCK}` },
        { role: "user", content: "<memory-context>unclosed" },
        { role: "system", content: ` ${BLOCK} ` },
        { role: "tool", content: BLOCK, toolCallId: "c" },
      ]);
      const conv = await store.getMessagesAsConversation("s1");
      expect(conv.map((m) => m.content)).toEqual([
        "What should I drink?",
        "Tea.",
        "a  b  c",
        "kept",
        "rest",
        "",
        "unclosed",
        ` ${BLOCK} `,
        BLOCK,
      ]);
    });

    it("trims Python's whitespace, not JavaScript's", async () => {
      const store = await backend.open({ clock: manualClock() });
      await session(store, "s1", [
        { role: "user", content: "\u001c\u001f\u0085 hi \u3000\n" },
        // U+FEFF is not whitespace to Python: it stays.
        { role: "assistant", content: "\ufeffanswer\ufeff" },
      ]);
      expect((await store.getMessagesAsConversation("s1")).map((m) => m.content)).toEqual([
        "hi",
        "\ufeffanswer\ufeff",
      ]);
    });

    it("returns [] for an unknown session and validates its arguments", async () => {
      const store = await backend.open({ clock: manualClock() });
      expect(await store.getMessagesAsConversation("ghost")).toEqual([]);
      expect(await store.getMessagesAsConversation("ghost", { includeAncestors: true })).toEqual([]);
      expect((await rejection(store.getMessagesAsConversation(""))).code).toBe("INVALID_ARGUMENT");
      const bad = store.getMessagesAsConversation("ghost", { includeAncestors: "yes" as never });
      expect((await rejection(bad)).code).toBe("INVALID_ARGUMENT");
    });

    it("orders by (timestamp, id)", async () => {
      const clock = manualClock(1_800_000_000);
      const store = await backend.open({ clock });
      await store.createSession({ id: "s1", source: "cli" });
      clock.set(1_800_000_200);
      await store.appendMessage({ sessionId: "s1", role: "user", content: "second" });
      clock.set(1_800_000_100);
      await store.appendMessage({ sessionId: "s1", role: "user", content: "first" });
      expect((await store.getMessagesAsConversation("s1")).map((m) => m.content)).toEqual([
        "first",
        "second",
      ]);
    });

    it("with includeAncestors replays the chain root first, interleaved by timestamp", async () => {
      const clock = manualClock(1_800_000_000);
      const store = await backend.open({ clock });
      await session(store, "root", [
        { role: "user", content: "r1" },
        { role: "assistant", content: "r2" },
      ]);
      await store.endSession("root", "compression");
      await session(
        store,
        "mid",
        [
          { role: "user", content: "m1" },
          { role: "assistant", content: "m2" },
        ],
        "root",
      );
      await session(
        store,
        "tip",
        [
          { role: "user", content: "t1" },
          { role: "assistant", content: "t2" },
        ],
        "mid",
      );
      await session(store, "unrelated", [{ role: "user", content: "x" }]);
      // A late message on the root still sorts by its own timestamp.
      await store.appendMessage({ sessionId: "root", role: "assistant", content: "r3" });

      expect((await store.getMessagesAsConversation("tip")).map((m) => m.content)).toEqual(["t1", "t2"]);
      expect(
        (await store.getMessagesAsConversation("tip", { includeAncestors: true })).map((m) => m.content),
      ).toEqual(["r1", "r2", "m1", "m2", "t1", "t2", "r3"]);
      expect(
        (await store.getMessagesAsConversation("mid", { includeAncestors: true })).map((m) => m.content),
      ).toEqual(["r1", "r2", "m1", "m2", "r3"]);
      expect(
        (await store.getMessagesAsConversation("root", { includeAncestors: true })).map((m) => m.content),
      ).toEqual(["r1", "r2", "r3"]);
      expect((await store.getMessagesAsConversation("tip", { includeAncestors: false })).length).toBe(2);
    });

    it("follows at most 100 sessions up the chain", async () => {
      const store = await backend.open({ clock: manualClock() });
      let parent: string | undefined;
      for (let i = 0; i < 105; i++) {
        const id = `s${String(i).padStart(3, "0")}`;
        await session(store, id, [{ role: "user", content: id }], parent);
        parent = id;
      }
      const conv = await store.getMessagesAsConversation("s104", { includeAncestors: true });
      expect(conv.length).toBe(100);
      expect(conv[0]?.content).toBe("s005");
      expect(conv[99]?.content).toBe("s104");
    });

    it("drops a replayed user prompt only when no assistant answered in between", async () => {
      const store = await backend.open({ clock: manualClock() });
      await session(store, "p", [
        { role: "user", content: "continue the task" },
        { role: "assistant", content: "   " }, // empty after trimming: not an answer
        { role: "tool", content: "noise", toolCallId: "x" },
      ]);
      await session(
        store,
        "c",
        [
          { role: "user", content: "continue the task" }, // replayed on resume: dropped
          { role: "assistant", toolCalls: [call("a")] },
          { role: "user", content: "continue the task" }, // after a tool-call answer: kept
          { role: "assistant", content: "done" },
          { role: "user", content: "continue the task" }, // after a content answer: kept
          { role: "user", content: "" },
          { role: "user", content: "" }, // empty prompts are never deduped
          { role: "user", content: null },
          { role: "user", content: null },
        ],
        "p",
      );
      const conv = await store.getMessagesAsConversation("c", { includeAncestors: true });
      expect(conv.map((m) => [m.role, m.content])).toEqual([
        ["user", "continue the task"],
        ["assistant", ""],
        ["tool", "noise"],
        ["assistant", null],
        ["user", "continue the task"],
        ["assistant", "done"],
        ["user", "continue the task"],
        ["user", ""],
        ["user", ""],
        ["user", null],
        ["user", null],
      ]);
      // Without ancestors nothing is deduped, even within the session.
      const own = await store.getMessagesAsConversation("c");
      expect(own.filter((m) => m.content === "continue the task").length).toBe(3);
    });

    it("compares prompts after cleaning, and an assistant with only empty tool calls is no answer", async () => {
      const store = await backend.open({ clock: manualClock() });
      await session(store, "p", [{ role: "user", content: "same" }]);
      await session(
        store,
        "c",
        [
          { role: "assistant", content: "", toolCalls: [] }, // stored NULL: no answer
          { role: "user", content: `${BLOCK}\n same ` }, // cleans to "same": a replay
        ],
        "p",
      );
      const conv = await store.getMessagesAsConversation("c", { includeAncestors: true });
      expect(conv).toStrictEqual([
        { role: "user", content: "same" },
        { role: "assistant", content: "" },
      ]);
    });
  });
};
