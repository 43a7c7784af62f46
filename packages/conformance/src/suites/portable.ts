import type { HermesStoreError, SessionStore } from "@hermes/core";
import { describe, expect, it } from "vitest";
import { type ContractSuite, manualClock, rejection } from "../harness.js";

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const call = (id: string, name = "terminal", args = '{"cmd":"ls"}') => ({
  id,
  type: "function",
  function: { name, arguments: args },
});

/** A small store: a titled root with a tool round trip, a compression child, a delegate, a branch. */
async function seed(store: SessionStore, clock: ReturnType<typeof manualClock>): Promise<void> {
  await store.createSession({ id: "root", source: "cli", model: "m1", systemPrompt: "be brief" });
  await store.setSessionTitle("root", "Deploy");
  await store.appendMessage({ sessionId: "root", role: "user", content: "deploy it" });
  await store.appendMessage({ sessionId: "root", role: "assistant", content: null, toolCalls: [call("c1")] });
  await store.appendMessage({
    sessionId: "root",
    role: "tool",
    content: "ok",
    toolCallId: "c1",
    toolName: "terminal",
  });
  await store.appendMessage({ sessionId: "root", role: "assistant", content: "done", tokenCount: 5 });
  await store.updateTokenCounts("root", { inputTokens: 100, outputTokens: 20, estimatedCostUsd: 0.5 });
  // A delegate starts while its parent is live.
  await store.createSession({ id: "sub", source: "subagent", model: "m2", parentSessionId: "root" });
  await store.appendMessage({ sessionId: "sub", role: "user", content: "look around" });
  clock.advance(10);
  await store.endSession("root", "compression");
  clock.advance(10);
  await store.createSession({ id: "cont", source: "cli", model: "m1", parentSessionId: "root" });
  await store.appendMessage({ sessionId: "cont", role: "user", content: "continue" });
  await store.updateTokenCounts("cont", { inputTokens: 7, cacheReadTokens: 3, reasoningTokens: 2 });
}

/** Streaming export/import, bounded reads, forks, lineage, usage statistics, Anthropic shape. */
export const portableSuite: ContractSuite = (backend) => {
  describe(`portable: export and import [${backend.name}]`, () => {
    it("exports every session with its stored rows, parents first, in a consistent order", async () => {
      const clock = manualClock();
      const store = await backend.open({ clock });
      await seed(store, clock);
      const all = await collect(store.exportStream());
      expect(all.map((s) => s.id)).toEqual(["root", "sub", "cont"]);
      const root = all[0]!;
      expect(root.message_count).toBe(4);
      expect(root.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
      // Stored text, not parsed: the round trip keeps the exact bytes.
      expect(typeof root.messages[1]!.tool_calls).toBe("string");
      expect(JSON.parse(root.messages[1]!.tool_calls as string)).toEqual([call("c1")]);
      const filtered = await collect(store.exportStream({ source: "subagent" }));
      expect(filtered.map((s) => s.id)).toEqual(["sub"]);
      const byId = await collect(store.exportStream({ sessionIds: ["cont", "nope", "root"] }));
      expect(byId.map((s) => s.id)).toEqual(["root", "cont"]);
      const since = await collect(
        store.exportStream({ since: (await store.getSession("cont"))!.started_at }),
      );
      expect(since.map((s) => s.id)).toEqual(["cont"]);
    });

    it("round-trips into an empty store: same sessions, messages, ids and counters", async () => {
      const clock = manualClock();
      const source = await backend.open({ clock });
      await seed(source, clock);
      const target = await backend.open();
      const report = await target.importSessions(source.exportStream());
      expect(report).toMatchObject({ sessionsImported: 3, messagesImported: 6, sessionsUnchanged: 0 });
      expect(await collect(target.exportStream())).toEqual(await collect(source.exportStream()));
      expect(await target.getMessagesAsConversation("root")).toEqual(
        await source.getMessagesAsConversation("root"),
      );
    });

    it("is idempotent: a second import adds nothing", async () => {
      const clock = manualClock();
      const source = await backend.open({ clock });
      await seed(source, clock);
      const target = await backend.open();
      await target.importSessions(source.exportStream());
      const again = await target.importSessions(source.exportStream());
      expect(again).toMatchObject({
        sessionsImported: 0,
        messagesImported: 0,
        sessionsUnchanged: 3,
        conflicts: [],
      });
      expect(await target.messageCount()).toBe(6);
      expect(await target.sessionCount()).toBe(3);
    });

    it("imports a child given before its parent", async () => {
      const clock = manualClock();
      const source = await backend.open({ clock });
      await seed(source, clock);
      const sessions = (await collect(source.exportStream())).reverse();
      const target = await backend.open();
      const report = await target.importSessions(sessions);
      expect(report.sessionsImported).toBe(3);
      expect((await target.getSession("cont"))?.parent_session_id).toBe("root");
    });

    it("keeps a stored session that differs (conflict) unless asked to replace it", async () => {
      const clock = manualClock();
      const source = await backend.open({ clock });
      await seed(source, clock);
      const target = await backend.open();
      await target.importSessions(source.exportStream());
      await target.appendMessage({ sessionId: "cont", role: "assistant", content: "local work" });
      const skipped = await target.importSessions(source.exportStream());
      expect(skipped.conflicts).toEqual([{ id: "cont", line: 3 }]);
      expect(await target.messageCount({ sessionId: "cont" })).toBe(2);
      const replaced = await target.importSessions(source.exportStream(), { onConflict: "replace" });
      expect(replaced.sessionsReplaced).toBe(1);
      expect(await target.messageCount({ sessionId: "cont" })).toBe(1);
      expect(await collect(target.exportStream())).toEqual(await collect(source.exportStream()));
    });

    it("rejects an invalid item with its number; with onInvalid 'skip' imports the rest", async () => {
      const target = await backend.open();
      const good = {
        id: "a",
        source: "cli",
        started_at: 1,
        messages: [{ role: "user", timestamp: 2, content: "hi" }],
      };
      const bad = { id: "b", source: "cli", started_at: "yesterday", messages: [] };
      const err = await rejection(target.importSessions([good, bad]));
      expect(err.code).toBe("IMPORT_INVALID");
      expect((err as HermesStoreError & { line: number }).line).toBe(2);
      expect(err.message).toContain("started_at");
      expect(await target.getSession("b")).toBeNull();
      const target2 = await backend.open();
      const report = await target2.importSessions([bad, good], { onInvalid: "skip" });
      expect(report.sessionsImported).toBe(1);
      expect(report.invalid).toEqual([{ line: 1, message: "started_at must be a finite number or null" }]);
    });

    it("rejects a session whose parent is nowhere, or detaches it on request", async () => {
      const target = await backend.open();
      const orphan = { id: "o", source: "cli", started_at: 1, parent_session_id: "gone", messages: [] };
      const err = await rejection(target.importSessions([orphan]));
      expect(err.code).toBe("IMPORT_INVALID");
      expect(err.message).toContain("gone");
      expect(await target.getSession("o")).toBeNull();
      const report = await target.importSessions([orphan], { missingParent: "detach" });
      expect(report.detached).toEqual([{ id: "o", line: 1 }]);
      expect((await target.getSession("o"))?.parent_session_id).toBeNull();
    });

    it("validates options", async () => {
      const store = await backend.open();
      expect(() => store.exportStream({ sessionIds: "x" as unknown as string[] })).toThrow(
        expect.objectContaining({ code: "INVALID_ARGUMENT" }),
      );
      expect((await rejection(store.importSessions(42 as unknown as string))).code).toBe("INVALID_ARGUMENT");
      expect((await rejection(store.importSessions([], { onConflict: "merge" as "skip" }))).code).toBe(
        "INVALID_ARGUMENT",
      );
    });
  });

  describe(`portable: bounded reads [${backend.name}]`, () => {
    it("iterMessages pages with a cursor in conversation order", async () => {
      const store = await backend.open({ clock: manualClock() });
      await store.createSession({ id: "s", source: "cli" });
      await store.createSession({ id: "other", source: "cli" });
      const ids: number[] = [];
      for (let i = 0; i < 25; i++) {
        ids.push(await store.appendMessage({ sessionId: "s", role: "user", content: `m${i}` }));
        await store.appendMessage({ sessionId: "other", role: "user", content: `x${i}` });
      }
      const all = await collect(store.iterMessages("s", { pageSize: 4 }));
      expect(all.map((m) => m.id)).toEqual(ids);
      expect(all).toEqual(await store.getMessages("s"));
      const first = await collect(store.iterMessages("s", { limit: 10, pageSize: 3 }));
      expect(first.map((m) => m.content)).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`));
      const next = await collect(store.iterMessages("s", { afterId: first[9]!.id, limit: 10 }));
      expect(next.map((m) => m.content)).toEqual(Array.from({ length: 10 }, (_, i) => `m${i + 10}`));
      expect(await collect(store.iterMessages("s", { afterId: ids[24]! }))).toEqual([]);
      expect(await collect(store.iterMessages("nope"))).toEqual([]);
      await expect(collect(store.iterMessages("s", { afterId: 999_999 }))).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
      expect(() => store.iterMessages("s", { limit: -1 })).toThrow(
        expect.objectContaining({ code: "INVALID_ARGUMENT" }),
      );
    });

    it("getConversationWindow returns the tail by count and by tokens, never opening on a tool result", async () => {
      const store = await backend.open({ clock: manualClock() });
      await store.createSession({ id: "s", source: "cli" });
      for (let i = 0; i < 10; i++) {
        await store.appendMessage({ sessionId: "s", role: "user", content: `question ${i}` });
        await store.appendMessage({
          sessionId: "s",
          role: "assistant",
          content: null,
          toolCalls: [call(`c${i}`)],
        });
        await store.appendMessage({
          sessionId: "s",
          role: "tool",
          content: "x".repeat(400),
          toolCallId: `c${i}`,
        });
        await store.appendMessage({
          sessionId: "s",
          role: "assistant",
          content: `answer ${i}`,
          tokenCount: 10,
        });
      }
      const full = await store.getMessagesAsConversation("s");
      const w = await store.getConversationWindow("s", { lastMessages: 6 });
      // The last 6 would open on a tool result (…, tool, assistant | user, assistant, tool, assistant):
      // the orphaned result is dropped.
      expect(w.messages).toEqual(full.slice(-5));
      expect(w.messages[0]!.role).not.toBe("tool");
      expect(w.omittedMessages).toBe(35);
      const byTokens = await store.getConversationWindow("s", { maxTokens: 150 });
      expect(byTokens.estimatedTokens).toBeLessThanOrEqual(150);
      expect(byTokens.messages).toEqual(full.slice(-byTokens.messages.length));
      expect(byTokens.messages.length).toBeGreaterThan(0);
      expect(byTokens.messages.length).toBeLessThan(8);
      const one = await store.getConversationWindow("s", { maxTokens: 1 });
      expect(one.messages).toEqual(full.slice(-1));
      expect((await store.getConversationWindow("nope")).messages).toEqual([]);
    });
  });

  describe(`portable: forks [${backend.name}]`, () => {
    it("copies messages up to a point, links the parent, counts and titles the fork", async () => {
      const clock = manualClock();
      const store = await backend.open({ clock });
      await seed(store, clock);
      const rows = await store.getMessages("root");
      const fork = await store.forkSession("root", { atMessageId: rows[2]!.id, newId: "f1" });
      expect(fork).toMatchObject({
        id: "f1",
        parent_session_id: "root",
        source: "cli",
        model: "m1",
        system_prompt: "be brief",
        title: "Deploy #2",
        message_count: 3,
        tool_call_count: 1,
        input_tokens: 0,
        ended_at: null,
      });
      // The reference's own /branch marker, so its later versions list the fork as a branch.
      expect(JSON.parse(fork.model_config ?? "{}")).toEqual({ _branched_from: "root" });
      const copied = await store.getMessages("f1");
      const strip = ({ id: _id, session_id: _s, ...rest }: (typeof copied)[number]) => rest;
      expect(copied.map(strip)).toEqual(rows.slice(0, 3).map(strip));
      expect(copied.every((m) => !rows.some((r) => r.id === m.id))).toBe(true);
      // The parent is untouched.
      expect(await store.messageCount({ sessionId: "root" })).toBe(4);
      const second = await store.forkSession("root");
      expect(second.title).toBe("Deploy #3");
      expect(second.message_count).toBe(4);
      expect(second.id).toMatch(/^\d{8}_\d{6}_[0-9a-f]{6}$/);
      const titled = await store.forkSession("sub", { title: "  Side quest " });
      expect(titled.title).toBe("Side quest");
      expect(titled.title).not.toBeNull();
      expect((await store.forkSession("sub")).title).toBeNull();
    });

    it("refuses unknown sessions, foreign messages, taken ids and titles, writing nothing", async () => {
      const clock = manualClock();
      const store = await backend.open({ clock });
      await seed(store, clock);
      const before = await store.sessionCount();
      expect((await rejection(store.forkSession("nope"))).code).toBe("SESSION_NOT_FOUND");
      const foreign = (await store.getMessages("sub"))[0]!.id;
      expect((await rejection(store.forkSession("root", { atMessageId: foreign }))).code).toBe(
        "INVALID_ARGUMENT",
      );
      expect((await rejection(store.forkSession("root", { newId: "sub" }))).code).toBe("INVALID_ARGUMENT");
      expect((await rejection(store.forkSession("root", { title: "Deploy" }))).code).toBe("TITLE_CONFLICT");
      expect((await rejection(store.forkSession("root", { atMessageId: -3 }))).code).toBe("INVALID_ARGUMENT");
      expect(await store.sessionCount()).toBe(before);
    });
  });

  describe(`portable: lineage and usage [${backend.name}]`, () => {
    it("tells compression, delegate and branch links apart", async () => {
      const clock = manualClock();
      const store = await backend.open({ clock });
      await seed(store, clock);
      clock.advance(5);
      const fork = await store.forkSession("cont", { newId: "fork" });
      await store.createSession({ id: "b0", source: "cli" });
      clock.advance(1);
      await store.endSession("b0", "branched");
      clock.advance(1);
      await store.createSession({ id: "b1", source: "cli", parentSessionId: "b0" });
      await store.createSession({ id: "later", source: "cli", parentSessionId: "sub" });
      await store.endSession("sub", "user_exit");
      const lineage = await store.getLineage("cont");
      expect(lineage?.root_id).toBe("root");
      expect(lineage?.session).toMatchObject({ id: "cont", link: "compression", depth: 0 });
      expect(lineage?.ancestors.map((n) => [n.id, n.link, n.depth])).toEqual([["root", null, 1]]);
      expect(lineage?.descendants.map((n) => [n.id, n.link, n.depth])).toEqual([[fork.id, "branch", 1]]);
      const fromRoot = await store.getLineage("root");
      expect(fromRoot?.descendants.map((n) => [n.id, n.link, n.depth])).toEqual([
        ["sub", "delegate", 1],
        ["cont", "compression", 1],
        ["fork", "branch", 2],
        ["later", "delegate", 2],
      ]);
      expect((await store.getLineage("b1"))?.session.link).toBe("branch");
      expect(await store.getLineage("nope")).toBeNull();
    });

    it("sums sessions, messages, tokens and cost by source, model and day", async () => {
      const clock = manualClock();
      const store = await backend.open({ clock });
      await seed(store, clock);
      const bySource = await store.usageStats({ groupBy: "source" });
      expect(bySource).toEqual([
        {
          group: "cli",
          sessions: 2,
          messages: 5,
          tool_calls: 1,
          api_calls: 0,
          input_tokens: 107,
          output_tokens: 20,
          cache_read_tokens: 3,
          cache_write_tokens: 0,
          reasoning_tokens: 2,
          estimated_cost_usd: 0.5,
          actual_cost_usd: null,
        },
        expect.objectContaining({ group: "subagent", sessions: 1, messages: 1, input_tokens: 0 }),
      ]);
      const byModel = await store.usageStats({ groupBy: "model" });
      expect(byModel.map((r) => [r.group, r.sessions])).toEqual([
        ["m1", 2],
        ["m2", 1],
      ]);
      const byDay = await store.usageStats({ groupBy: "day" });
      expect(byDay).toEqual([expect.objectContaining({ group: "2026-01-01", sessions: 3, messages: 6 })]);
      const cont = (await store.getSession("cont"))!;
      const late = await store.usageStats({ groupBy: "source", since: cont.started_at });
      expect(late.map((r) => [r.group, r.sessions])).toEqual([["cli", 1]]);
      const early = await store.usageStats({ groupBy: "source", until: cont.started_at });
      expect(early.map((r) => [r.group, r.sessions])).toEqual([
        ["cli", 1],
        ["subagent", 1],
      ]);
      expect((await rejection(store.usageStats({ groupBy: "week" as "day" }))).code).toBe("INVALID_ARGUMENT");
    });
  });

  describe(`portable: Anthropic shape [${backend.name}]`, () => {
    it("puts the system prompt apart and tool use/results in content blocks", async () => {
      const clock = manualClock();
      const store = await backend.open({ clock });
      await seed(store, clock);
      await store.appendMessage({ sessionId: "root", role: "user", content: "and now?" });
      const { system, messages } = await store.getMessagesAsAnthropic("root");
      expect(system).toBe("be brief");
      expect(messages).toEqual([
        { role: "user", content: [{ type: "text", text: "deploy it" }] },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "c1", name: "terminal", input: { cmd: "ls" } }],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "ok" }] },
        { role: "assistant", content: [{ type: "text", text: "done" }] },
        { role: "user", content: [{ type: "text", text: "and now?" }] },
      ]);
      expect(await store.getMessagesAsAnthropic("nope")).toEqual({ messages: [] });
    });
  });
};
