import type { SessionStore } from "@hermes/core";
import { describe, expect, it } from "vitest";
import { type ContractSuite, manualClock, rejection } from "../harness.js";

/** A store with `messages` appended to session `s1` (source `cli`), in order. */
async function storeWith(
  open: () => Promise<SessionStore>,
  messages: Array<
    string | { content: string | null; role?: string; toolName?: string; toolCalls?: unknown[] }
  >,
): Promise<{ store: SessionStore; ids: number[] }> {
  const store = await open();
  await store.createSession({ id: "s1", source: "cli", model: "m1" });
  const ids: number[] = [];
  for (const m of messages) {
    const msg = typeof m === "string" ? { content: m } : m;
    ids.push(
      await store.appendMessage({
        sessionId: "s1",
        role: msg.role ?? "user",
        content: msg.content,
        toolName: msg.toolName ?? null,
        toolCalls: msg.toolCalls ?? null,
      }),
    );
  }
  return { store, ids };
}

const found = async (store: SessionStore, q: string) =>
  (await store.searchMessages(q, { limit: 100 })).map((h) => h.id).sort((a, b) => a - b);

/** searchMessages (SPEC §5 "Search", §6, DESIGN "Search"). */
export const searchSuite: ContractSuite = (backend) => {
  const open = () => backend.open({ clock: manualClock() });

  describe(`search: reference behaviour [${backend.name}]`, () => {
    it("finds words, phrases, prefixes, dotted and hyphenated terms; blank queries find nothing", async () => {
      const { store, ids } = await storeWith(open, [
        "deploy the docker image",
        "deployment failed",
        "fix chat-send in P2.2",
        "send the chat later",
      ]);
      const [a, b, c] = ids;
      expect(await found(store, "docker")).toEqual([a]);
      expect(await found(store, "deploy*")).toEqual([a, b]);
      expect(await found(store, '"docker image"')).toEqual([a]);
      expect(await found(store, '"image docker"')).toEqual([]);
      expect(await found(store, "chat-send")).toEqual([c]);
      expect(await found(store, "P2.2")).toEqual([c]);
      expect(await found(store, "deploy OR failed")).toEqual([a, b]);
      expect(await found(store, "deploy* NOT docker")).toEqual([b]);
      for (const q of ["", "   ", "***", "AND", "NOT", '""', "()"])
        expect(await store.searchMessages(q)).toEqual([]);
    });

    it("a query never returns what it excludes: a leading NOT excludes, a lone negation is refused", async () => {
      const { store, ids } = await storeWith(open, [
        "deploy the docker image",
        "deployment failed",
        "记忆断裂 in the docker container",
        "记忆断裂了",
      ]);
      const [a, b, c, d] = ids;
      expect(await found(store, "NOT docker deploy*")).toEqual([b]);
      expect(await found(store, "NOT docker AND deploy*")).toEqual([b]);
      expect(await found(store, "NOT NOT docker")).toEqual([a, c]);
      expect(await found(store, "failed OR NOT docker deploy*")).toEqual([b]);
      expect(await found(store, "NOT docker 记忆断裂")).toEqual([d]);
      for (const q of [
        "NOT docker",
        "NOT docker OR failed",
        "deploy OR NOT docker",
        "NOT 记忆断裂",
        "NOT 记忆",
      ]) {
        const error = await rejection(store.searchMessages(q));
        expect(error.code, q).toBe("INVALID_ARGUMENT");
        expect(error.message, q).toMatch(/only excludes: a NOT needs words to find before it/);
      }
    });

    it("finds tokens that occur only in tool_calls JSON or tool_name", async () => {
      const { store, ids } = await storeWith(open, [
        { content: null, role: "assistant", toolCalls: [{ function: { name: "kubectl_rollout" } }] },
        { content: "done", role: "tool", toolName: "web_search" },
      ]);
      expect(await found(store, "kubectl_rollout")).toEqual([ids[0]]);
      expect(await found(store, "web_search")).toEqual([ids[1]]);
    });

    it("hits carry the session's source, model and start, ranked with >>>snippets<<<", async () => {
      const { store, ids } = await storeWith(open, ["a docker note", "docker docker docker everywhere"]);
      const hits = await store.searchMessages("docker");
      expect(hits.map((h) => h.id)).toEqual([ids[1], ids[0]]); // bm25: the denser match first
      const session = await store.getSession("s1");
      expect(hits[1]).toEqual({
        id: ids[0],
        session_id: "s1",
        role: "user",
        snippet: "a >>>docker<<< note",
        timestamp: expect.any(Number),
        tool_name: null,
        source: "cli",
        model: "m1",
        session_started: session?.started_at,
        context: [
          { role: "user", content: "a docker note" },
          { role: "user", content: "docker docker docker everywhere" },
        ],
      });
    });

    it("context is the previous, the matched and the next message of the same session, 200 characters each", async () => {
      const long = `${"长".repeat(150)}😀${"x".repeat(100)}`;
      const { store, ids } = await storeWith(open, ["first", long, "needle here", "after", "last"]);
      await store.createSession({ id: "other", source: "cli" });
      await store.appendMessage({ sessionId: "other", role: "user", content: "between" });
      const [hit] = await store.searchMessages("needle");
      expect(hit?.id).toBe(ids[2]);
      expect(hit?.context).toEqual([
        { role: "user", content: `${"长".repeat(150)}😀${"x".repeat(49)}` },
        { role: "user", content: "needle here" },
        { role: "user", content: "after" },
      ]);
      expect([...(hit?.context[0]?.content ?? "")].length).toBe(200);
    });

    it("filters by source (an empty list finds nothing), excluded sources and roles, combined; pages with limit/offset", async () => {
      const store = await open();
      for (const [id, source] of [
        ["c", "cli"],
        ["t", "telegram"],
        ["d", "discord"],
      ] as const) {
        await store.createSession({ id, source });
        await store.appendMessage({ sessionId: id, role: "user", content: `report from ${source}` });
        await store.appendMessage({ sessionId: id, role: "assistant", content: `report answer ${source}` });
      }
      const sources = async (o: object) =>
        (await store.searchMessages("report", { limit: 100, ...o }))
          .map((h) => `${h.source}/${h.role}`)
          .sort();
      expect(await sources({ sourceFilter: ["cli"] })).toEqual(["cli/assistant", "cli/user"]);
      expect(await sources({ sourceFilter: [] })).toEqual([]);
      expect(await sources({ excludeSources: ["cli", "discord"] })).toEqual([
        "telegram/assistant",
        "telegram/user",
      ]);
      expect(await sources({ roleFilter: ["assistant"] })).toHaveLength(3);
      expect(await sources({ roleFilter: [] })).toHaveLength(6);
      expect(
        await sources({
          sourceFilter: ["cli", "telegram"],
          excludeSources: ["telegram"],
          roleFilter: ["user"],
        }),
      ).toEqual(["cli/user"]);
      const all = (await store.searchMessages("report", { limit: 100 })).map((h) => h.id);
      expect(all).toHaveLength(6);
      expect((await store.searchMessages("report", { limit: 2, offset: 3 })).map((h) => h.id)).toEqual(
        all.slice(3, 5),
      );
      expect(await store.searchMessages("report", { limit: 0 })).toEqual([]);
      expect(await store.searchMessages("report")).toHaveLength(6); // default limit 20
    });
  });

  describe(`search: hostile input never fails [${backend.name}]`, () => {
    it("punctuation in and around words still finds the word", async () => {
      const { store, ids } = await storeWith(open, [
        "hello world",
        "it's about C# and user@example.com",
        "see file.ts:42 or https://example.com/docs?page=2",
      ]);
      const [a, b, c] = ids;
      for (const [q, expected] of [
        ["hello!", [a]],
        ["(hello)", [a]],
        ["C#", [b]],
        ["it's", [b]],
        ["user@example.com", [b]],
        ["file.ts:42", [c]],
        ["https://example.com/docs?page=2", [c]],
      ] as const) {
        expect(await found(store, q)).toEqual(expected);
      }
    });

    it("repairs dangling and doubled operators; neutralises col:x, NEAR(, ^ and stray quotes", async () => {
      const { store, ids } = await storeWith(open, ["alpha beta", "gamma delta", "alpha gamma"]);
      const [ab, gd, ag] = ids;
      expect(await found(store, "alpha AND OR gamma")).toEqual([ab, gd, ag]);
      expect(await found(store, "alpha AND NOT gamma")).toEqual([ab]);
      expect(await found(store, "OR alpha OR")).toEqual([ab, ag]);
      expect(await found(store, "content:alpha")).toEqual([ab, ag]);
      expect(await found(store, "nosuchcolumn:alpha")).toEqual([]);
      expect(await found(store, "NEAR(alpha beta)")).toEqual([]);
      expect(await found(store, "NEAR(alpha")).toEqual([]);
      expect(await found(store, "^alpha")).toEqual([ab, ag]);
      expect(await found(store, '"alpha')).toEqual([ab, ag]);
      expect(await found(store, "alpha) (beta")).toEqual([ab]);
      expect(await found(store, "alpha NOT NOT NOT gamma")).toEqual([ab]);
      expect(await found(store, "\u0000alpha\u0000")).toEqual([ab, ag]);
      expect(await found(store, `${"(".repeat(500)}alpha`)).toEqual([ab, ag]);
    });
  });

  describe(`search: CJK per term [${backend.name}]`, () => {
    it("finds 广西 OR 桂林, Agent通信, 记忆断裂 docker and 100%完成 as a user means them", async () => {
      const { store, ids } = await storeWith(open, [
        "广西的天气", // 0
        "桂林山水", // 1
        "我们的Agent通信协议", // 2
        "agent 通信", // 3
        "记忆断裂 in the docker container", // 4
        "记忆断裂了", // 5
        "任务100%完成", // 6
        "100% 完成", // 7
        "无关的内容", // 8
      ]);
      const at = (...i: number[]) => i.map((n) => ids[n]);
      expect(await found(store, "广西 OR 桂林")).toEqual(at(0, 1));
      expect(await found(store, "广西 桂林")).toEqual([]);
      expect(await found(store, "Agent通信")).toEqual(at(2));
      expect(await found(store, "agent通信")).toEqual(at(2));
      expect(await found(store, "记忆断裂 docker")).toEqual(at(4));
      expect(await found(store, "100%完成")).toEqual(at(6));
      expect(await found(store, "完成")).toEqual(at(6, 7));
      expect(await found(store, "通信 agent")).toEqual(at(2, 3));
      expect(await found(store, "的")).toEqual(at(0, 2, 8));
      expect(await found(store, "桂")).toEqual(at(1));
      expect(await found(store, "记忆 NOT docker")).toEqual(at(5));
      expect(await found(store, "山水!")).toEqual(at(1));
    });

    it("one- and two-character terms stay right after appends, clears and deletes", async () => {
      const { store, ids } = await storeWith(open, ["测试一下", "没有"]);
      expect(await found(store, "测试")).toEqual([ids[0]]);
      const later = await store.appendMessage({ sessionId: "s1", role: "user", content: "再测试" });
      expect(await found(store, "测试")).toEqual([ids[0], later]);
      await store.createSession({ id: "s2", source: "cli" });
      const other = await store.appendMessage({ sessionId: "s2", role: "user", content: "测试 s2" });
      expect(await found(store, "测")).toEqual([ids[0], later, other]);
      await store.clearMessages("s1");
      expect(await found(store, "测试")).toEqual([other]);
      await store.deleteSession("s2");
      expect(await found(store, "测试")).toEqual([]);
    });

    it("short-term hits are newest first with the text around the match", async () => {
      const { store, ids } = await storeWith(open, [`${"前".repeat(60)}目标${"后".repeat(100)}`, "目标在这"]);
      const hits = await store.searchMessages("目标");
      expect(hits.map((h) => h.id)).toEqual([ids[1], ids[0]]);
      expect(hits[1]?.snippet).toBe(`${"前".repeat(40)}目标${"后".repeat(78)}`);
    });
  });

  describe(`search: limits [${backend.name}]`, () => {
    it("refuses over-long queries, too many terms and bad paging with INVALID_ARGUMENT", async () => {
      const store = await open();
      for (const [q, o] of [
        ["x".repeat(4001), {}],
        [Array.from({ length: 65 }, (_, i) => `t${i}`).join(" "), {}],
        ["ok", { limit: -1 }],
        ["ok", { limit: 1001 }],
        ["ok", { offset: -5 }],
        [null, {}],
      ] as const) {
        expect((await rejection(store.searchMessages(q as string, o))).code).toBe("INVALID_ARGUMENT");
      }
    });
  });
};
