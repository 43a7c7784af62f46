import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { manualClock } from "@hermes/conformance";
import type { SessionStore } from "@hermes/core";
import { openPostgresSessionStore } from "@hermes/postgres";
import { openSessionStore } from "@hermes/store";
import { describe, expect, inject, it } from "vitest";

const url = inject("pgConnectionString");
if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);

type Outcome = { value: unknown } | { error: string };

/**
 * One scripted sequence of operations, recording every result (or error code). Run against
 * both backends with the same clock, the two transcripts must be equal.
 */
async function script(store: SessionStore, clock: ReturnType<typeof manualClock>, dir: string) {
  const log: Array<[string, Outcome]> = [];
  const step = async (name: string, fn: () => Promise<unknown>) => {
    try {
      log.push([name, { value: await fn() }]);
    } catch (error) {
      log.push([name, { error: (error as { code?: string }).code ?? String(error) }]);
    }
  };
  const collect = async <T>(it: AsyncIterable<T>) => {
    const out: T[] = [];
    for await (const x of it) out.push(x);
    return out;
  };

  await step("create root", () =>
    store.createSession({ id: "root", source: "cli", model: "m1", modelConfig: { t: 1 } }),
  );
  await step("create tg", () =>
    store.createSession({ id: "tg", source: "telegram", userId: "u1", systemPrompt: "Be brief." }),
  );
  await step("create orphan child", () =>
    store.createSession({ id: "x", source: "cli", parentSessionId: "nope" }),
  );
  await step("append to unknown", () =>
    store.appendMessage({ sessionId: "ghost", role: "user", content: "lost" }),
  );
  clock.advance(10);
  await step("turn 1", () =>
    store.appendMessages([
      { sessionId: "root", role: "user", content: "Deploy the docker image to staging" },
      {
        sessionId: "root",
        role: "assistant",
        content: null,
        toolCalls: [
          {
            id: "c1",
            type: "function",
            function: { name: "kubectl_rollout", arguments: '{"ns":"staging"}' },
          },
        ],
        finishReason: "tool_calls",
        tokenCount: 12,
      },
      {
        sessionId: "root",
        role: "tool",
        content: "rollout complete",
        toolCallId: "c1",
        toolName: "kubectl_rollout",
      },
      {
        sessionId: "root",
        role: "assistant",
        content: "Done: chat-send v2.2 is live.",
        reasoning: "checked",
      },
    ]),
  );
  const filler = (n: number, tag: string) =>
    Array.from({ length: n }, (_, i) => `${tag}${i % 7 === 0 ? "." : ""} word${i}`).join(" ");
  await step("long messages", () =>
    store.appendMessages([
      {
        sessionId: "root",
        role: "user",
        content: `${filler(30, "alpha")} Needle here: ${filler(60, "beta")} needle again.`,
      },
      { sessionId: "root", role: "assistant", content: `${filler(80, "gamma")}: the end needle` },
      {
        sessionId: "root",
        role: "user",
        content: `${filler(45, "delta")} needle ${filler(45, "delta")} needle`,
      },
      {
        sessionId: "tg",
        role: "user",
        content: `${"长文".repeat(40)}记忆断裂${"后文".repeat(40)}。记忆断裂！`,
      },
    ]),
  );
  await step("cjk", () =>
    store.appendMessages([
      { sessionId: "tg", role: "user", content: "广西桂林的山水很美" },
      { sessionId: "tg", role: "assistant", content: "是的，桂林山水甲天下。Agent通信正常" },
      { sessionId: "tg", role: "user", content: "记忆断裂 docker 100%完成" },
    ]),
  );
  await step("tokens", () =>
    store.updateTokenCounts("root", {
      inputTokens: 100,
      outputTokens: 20,
      estimatedCostUsd: 0.5,
      apiCallCount: 2,
    }),
  );
  await step("tokens absolute", () =>
    store.updateTokenCounts("tg", { inputTokens: 7, absolute: true, billingProvider: "x" }),
  );
  await step("title", () => store.setSessionTitle("root", "  Deploy  staging "));
  await step("title conflict", () => store.setSessionTitle("tg", "Deploy staging"));
  await step("title too long", () => store.setSessionTitle("tg", "x".repeat(500)));
  await step("next title", () => store.getNextTitleInLineage("Deploy staging"));
  clock.advance(60);
  await step("end root", () => store.endSession("root", "compression"));
  clock.advance(1);
  await step("continuation", () =>
    store.createSession({ id: "root-2", source: "cli", parentSessionId: "root", model: "m1" }),
  );
  await step("continuation title", async () =>
    store.setSessionTitle("root-2", await store.getNextTitleInLineage("Deploy staging")),
  );
  await step("continue", () =>
    store.appendMessage({ sessionId: "root-2", role: "user", content: "and production?" }),
  );
  await step("fork", () => store.forkSession("root", { newId: "fork", atMessageId: 2 }));
  await step("fork conflict", () => store.forkSession("root", { newId: "fork2", title: "Deploy staging" }));
  await step("resolve title", () => store.resolveSessionByTitle("Deploy staging"));
  await step("by title", () => store.getSessionByTitle("Deploy staging #2"));
  await step("prefix", () => store.resolveSessionId("roo"));
  await step("lineage", () => store.getLineage("root"));
  await step("tip", () => store.getCompressionTip("root"));
  await step("resume", () => store.resolveResumeSessionId("root"));
  await step("list", () => store.listSessionsRich({ limit: 10 }));
  await step("list children", () =>
    store.listSessionsRich({ includeChildren: true, excludeSources: ["telegram"] }),
  );
  await step("search sessions", () => store.searchSessions({ limit: 10 }));
  await step("messages", () => store.getMessages("root"));
  await step("conversation", () => store.getMessagesAsConversation("root-2", { includeAncestors: true }));
  await step("anthropic", () => store.getMessagesAsAnthropic("root"));
  await step("window", () => store.getConversationWindow("root", { lastMessages: 2 }));
  await step("iter", async () => collect(store.iterMessages("root", { afterId: 1, limit: 2 })));
  for (const q of [
    "docker",
    "deploy*",
    '"docker image"',
    "kubectl_rollout",
    "chat-send",
    "v2.2",
    "deploy NOT docker",
    "rollout OR live",
    "广西 OR 桂林",
    "桂林",
    "Agent通信",
    "记忆断裂 docker",
    "100%完成",
    "的",
    "",
    "(((",
    'NEAR("x',
    "needle",
    "word1*",
    '"needle here"',
    "needle word3",
    "gamma OR needle",
    "记忆断裂",
  ])
    await step(`search ${q}`, () => store.searchMessages(q, { limit: 10 }));
  await step("search filtered", () =>
    store.searchMessages("docker", { sourceFilter: ["telegram"], roleFilter: ["user"] }),
  );
  await step("usage by source", () => store.usageStats({ groupBy: "source" }));
  await step("usage by day", () => store.usageStats({ groupBy: "day" }));
  await step("export stream", async () => collect(store.exportStream()));
  await step("export session", () => store.exportSession("tg"));
  await step("markdown", () => store.exportSessionMarkdown("root"));
  const file = join(dir, "out.jsonl");
  await step("export jsonl", () => store.exportJsonl(file, { source: "cli" }));
  await step("jsonl lines", async () => readFileSync(file, "utf8").split("\n").slice(1));
  await step("end tg", () => store.endSession("tg", "user_exit"));
  clock.advance(100 * 86_400);
  await step("prune", () => store.pruneSessions({ olderThanDays: 90 }));
  await step("after prune", () => store.searchSessions({ limit: 10 }));
  await step("orphaned child", () => store.getSession("root-2"));
  await step("import back", () => store.importSessions(file));
  await step("import again", () => store.importSessions(file));
  await step("counts", async () => [await store.sessionCount(), await store.messageCount()]);
  await step("auto prune", () => store.maybeAutoPruneAndVacuum({ retentionDays: 1 }));
  await step("meta", () => store.getMeta("last_auto_prune"));
  await step("delete", () => store.deleteSession("root"));
  await step("clear", () => store.clearMessages("root-2"));
  await step("final", () => store.exportAll());
  return log;
}

describe("differential: SQLite and PostgreSQL give the same results", () => {
  it("one scripted sequence (sessions, tool calls, CJK, titles, lineage, search, export, prune, import) matches step by step", async () => {
    const start = 1_767_225_600;
    const sqliteDir = mkdtempSync(join(tmpdir(), "diff-sqlite-"));
    const pgDir = mkdtempSync(join(tmpdir(), "diff-pg-"));
    const sqliteClock = manualClock(start);
    const pgClock = manualClock(start);
    const sqlite = await openSessionStore({ path: join(sqliteDir, "state.db"), clock: sqliteClock });
    const postgres = await openPostgresSessionStore({
      connectionString: url,
      schema: `d_${randomBytes(6).toString("hex")}`,
      clock: pgClock,
    });
    try {
      const a = await script(sqlite, sqliteClock, sqliteDir);
      const b = await script(postgres, pgClock, pgDir);
      expect(b.map(([name]) => name)).toEqual(a.map(([name]) => name));
      const differing = a.filter(([, expected], i) => !isDeepStrictEqual(expected, b[i]![1])).map(([n]) => n);
      if (differing.length > 0) console.log("differing steps:", differing);
      if (process.env.DIFF_DEBUG)
        for (const n of differing) {
          const i = a.findIndex(([x]) => x === n);
          const brief = (o: Outcome) =>
            "value" in o && Array.isArray(o.value)
              ? (o.value as Array<{ id: number; snippet: string }>).map((h) => [h.id, h.snippet])
              : o;
          console.log(n, JSON.stringify(brief(a[i]![1])), "\n   pg:", JSON.stringify(brief(b[i]![1])));
        }
      for (let i = 0; i < a.length; i++) {
        const [name, expected] = a[i]!;
        expect({ name, outcome: b[i]![1] }).toEqual({ name, outcome: expected });
      }
    } finally {
      await sqlite.close();
      await postgres.close();
    }
  });
});

describe("differential: ties in newest-first (substring) search", () => {
  it("messages written in the same second come back in the same order on both backends", async () => {
    const frozen = () => 1_767_225_600; // every row gets the same timestamp: only the tie rule orders them
    const dir = mkdtempSync(join(tmpdir(), "diff-ties-"));
    const sqlite = await openSessionStore({ path: join(dir, "state.db"), clock: frozen });
    const postgres = await openPostgresSessionStore({
      connectionString: url,
      schema: `t_${randomBytes(6).toString("hex")}`,
      clock: frozen,
    });
    const run = async (store: SessionStore) => {
      await store.createSession({ id: "cli-1", source: "cli" });
      await store.createSession({ id: "tg-1", source: "telegram" });
      for (let i = 0; i < 8; i++) {
        const sessionId = i % 3 === 0 ? "tg-1" : "cli-1";
        await store.appendMessage({ sessionId, role: "user", content: `第${i}次去桂林旅行` });
      }
      const ids = async (query: string, options: Record<string, unknown> = {}) =>
        (await store.searchMessages(query, options)).map((hit) => hit.id);
      return {
        twoChars: await ids("桂林"),
        oneChar: await ids("林"),
        paged: await ids("桂林", { limit: 3, offset: 2 }),
        bySource: await ids("桂林", { sourceFilter: ["telegram", "cli"] }),
        excluding: await ids("桂林", { excludeSources: ["telegram"] }),
      };
    };
    try {
      const expected = await run(sqlite);
      expect(expected.twoChars).toHaveLength(8);
      expect(await run(postgres)).toEqual(expected);
    } finally {
      await sqlite.close();
      await postgres.close();
    }
  });
});
