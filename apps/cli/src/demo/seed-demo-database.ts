import { openSessionStore } from "@hermes/store";

/** What {@link seedDemoDatabase} wrote. */
export interface DemoSeedSummary {
  sessions: number;
  messages: number;
  /** Ids by role in the tour. */
  ids: {
    dockerRoot: string;
    dockerTip: string;
    telegram: string;
    discord: string;
    delegate: string;
    oldCron: string;
  };
}

const HOUR = 3600;
const DAY = 24 * HOUR;

/** A reference-style session id, `YYYYMMDD_HHMMSS_suffix`, from a UTC epoch time. */
function idAt(epoch: number, suffix: string): string {
  const iso = new Date(epoch * 1000).toISOString();
  return `${iso.slice(0, 10).replace(/-/g, "")}_${iso.slice(11, 19).replace(/:/g, "")}_${suffix}`;
}

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  id,
  type: "function",
  function: { name, arguments: JSON.stringify(args) },
});

/**
 * Fills `path` with a small but realistic history: a Docker fix that was compressed into a
 * second session (titles `Fix Docker build`, `Fix Docker build #2`), a Telegram chat in
 * Chinese, a Discord debugging session with a delegated sub-agent, token and cost counters,
 * and old cron runs that `prune` would remove. Times are spread over the last two weeks
 * (`now` in epoch seconds), driven through the store's clock so every row looks lived-in.
 */
export async function seedDemoDatabase(
  path: string,
  now: number = Date.now() / 1000,
): Promise<DemoSeedSummary> {
  let t = now - 14 * DAY;
  const store = await openSessionStore({ path, clock: () => t });
  const at = (epoch: number) => {
    t = epoch;
  };
  const tick = (seconds: number) => {
    t += seconds;
  };
  let messages = 0;
  const say = async (
    sessionId: string,
    role: string,
    content: string | null,
    extra: Record<string, unknown> = {},
  ) => {
    tick(7 + (messages % 5) * 11);
    messages++;
    return store.appendMessage({ sessionId, role, content, ...extra });
  };

  try {
    // Old cron runs, ended: what `prune --older-than 7` finds.
    const oldCron = idAt(now - 13 * DAY, "cron01");
    for (const [i, id] of [oldCron, idAt(now - 12 * DAY, "cron02")].entries()) {
      at(now - (13 - i) * DAY);
      await store.createSession({ id, source: "cron", model: "hermes-4-70b" });
      await say(id, "user", "Nightly job: rotate logs and vacuum the build cache");
      await say(id, "assistant", "Rotated 14 log files and freed 2.3 GB of build cache.");
      tick(60);
      await store.endSession(id, "completed");
    }

    // A Docker fix, compressed into a second session when the context filled up.
    at(now - 7 * DAY + 9 * HOUR);
    const dockerRoot = idAt(t, "a1b2c3");
    await store.createSession({
      id: dockerRoot,
      source: "cli",
      model: "anthropic/claude-sonnet-4.6",
      systemPrompt: "You are Hermes, a helpful coding agent.",
    });
    await store.setSessionTitle(dockerRoot, "Fix Docker build");
    await say(dockerRoot, "user", "The Docker build fails at `pnpm install` with EACCES. Can you fix it?");
    await say(dockerRoot, "assistant", "Let me run the build and look at the error.", {
      reasoning:
        "The EACCES is probably the non-root user writing to a root-owned pnpm store. Reproduce first.",
      toolCalls: [call("call_build1", "terminal", { command: "docker build -t app ." })],
    });
    await say(
      dockerRoot,
      "tool",
      "Step 7/12 : RUN pnpm install --frozen-lockfile\n ERR_PNPM_EACCES  EACCES: permission denied, mkdir '/root/.local/share/pnpm'\nThe command '/bin/sh -c pnpm install' returned a non-zero code: 1",
      { toolName: "terminal", toolCallId: "call_build1" },
    );
    await say(
      dockerRoot,
      "assistant",
      "The image switches to USER node before pnpm can write its store. Patching the Dockerfile.",
      {
        toolCalls: [
          call("call_patch1", "patch", {
            path: "Dockerfile",
            diff: "-USER node\n-RUN pnpm install\n+RUN pnpm install\n+USER node",
          }),
        ],
      },
    );
    await say(dockerRoot, "tool", "Patched Dockerfile (1 hunk)", {
      toolName: "patch",
      toolCallId: "call_patch1",
    });
    await store.updateTokenCounts(dockerRoot, {
      inputTokens: 48_210,
      outputTokens: 3_115,
      cacheReadTokens: 30_000,
      apiCallCount: 4,
      estimatedCostUsd: 0.1912,
      costStatus: "estimated",
    });
    tick(30);
    await store.endSession(dockerRoot, "compression");
    tick(5);
    const dockerTip = idAt(t, "d4e5f6");
    await store.createSession({
      id: dockerTip,
      source: "cli",
      model: "anthropic/claude-sonnet-4.6",
      parentSessionId: dockerRoot,
    });
    await store.setSessionTitle(dockerTip, await store.getNextTitleInLineage("Fix Docker build"));
    await say(
      dockerTip,
      "user",
      "[Context summary] We moved USER node after pnpm install. Rebuild and verify.",
    );
    await say(dockerTip, "assistant", "Rebuilding.", {
      toolCalls: [
        call("call_build2", "terminal", {
          command: "docker build -t app . && docker run --rm app pnpm test",
        }),
      ],
    });
    await say(dockerTip, "tool", "Successfully built 3f9c2a1d\n✓ 128 tests passed", {
      toolName: "terminal",
      toolCallId: "call_build2",
    });
    await say(dockerTip, "assistant", "The Docker build passes and all 128 tests are green.");
    await store.updateTokenCounts(dockerTip, {
      inputTokens: 12_400,
      outputTokens: 820,
      apiCallCount: 2,
      estimatedCostUsd: 0.0496,
      costStatus: "estimated",
    });
    tick(120);
    await store.endSession(dockerTip, "user_exit");

    // A Telegram chat in Chinese (found by 1-, 2- and 3+-character CJK queries).
    at(now - 4 * DAY + 20 * HOUR);
    const telegram = idAt(t, "tg7781");
    await store.createSession({
      id: telegram,
      source: "telegram",
      model: "openai/gpt-5.4",
      userId: "tg:7781",
    });
    await store.setSessionTitle(telegram, "记忆断裂 调查");
    await say(telegram, "user", "昨天和其他Agent的聊天记录，记忆断裂问题又复现了。能帮我查一下吗？");
    await say(telegram, "assistant", "好的。我先搜索一下相关的会话记录。", {
      toolCalls: [call("call_search1", "session_search", { query: "记忆断裂" })],
    });
    await say(
      telegram,
      "tool",
      "找到 3 条记录：广西 桂林 旅行计划 (11月20日)、记忆断裂 复现步骤、Agent通信 日志",
      {
        toolName: "session_search",
        toolCallId: "call_search1",
      },
    );
    await say(
      telegram,
      "assistant",
      "原因是上下文压缩时丢失了旅行计划的摘要。我已经把广西桂林的行程重新写入记忆。",
    );
    await store.updateTokenCounts(telegram, {
      inputTokens: 6_020,
      outputTokens: 910,
      estimatedCostUsd: 0.0121,
    });

    // Discord: a flaky test, with a delegated sub-agent session as a child.
    at(now - 2 * DAY + 14 * HOUR);
    const discord = idAt(t, "dc0042");
    const delegate = `${discord}_sub1`;
    await store.createSession({ id: discord, source: "discord", model: "openai/gpt-5.4" });
    await store.setSessionTitle(discord, "Flaky websocket test");
    await say(discord, "user", "test/ws-reconnect.test.ts fails about one run in five on CI. Any idea?");
    await say(
      discord,
      "assistant",
      "I'll ask a sub-agent to bisect the last 20 commits while I read the test.",
      {
        reasoning: "Timing-dependent. Likely a fixed sleep racing the reconnect backoff. Bisect in parallel.",
        toolCalls: [
          call("call_delegate1", "delegate_task", { goal: "bisect ws-reconnect flake", commits: 20 }),
        ],
      },
    );
    await store.createSession({
      id: delegate,
      source: "discord",
      model: "openai/gpt-5.4-mini",
      parentSessionId: discord,
    });
    await say(delegate, "user", "Bisect the ws-reconnect flake over the last 20 commits.");
    await say(delegate, "assistant", "First bad commit: 9be41c2 (reduce reconnect backoff to 50 ms).");
    tick(30);
    await store.endSession(delegate, "completed");
    await say(discord, "tool", "First bad commit: 9be41c2 (reduce reconnect backoff to 50 ms).", {
      toolName: "delegate_task",
      toolCallId: "call_delegate1",
    });
    await say(
      discord,
      "assistant",
      "The test waits a fixed 100 ms, but since 9be41c2 the backoff jitter can reach 120 ms. Waiting for the `reconnected` event instead fixes the race.",
    );
    await store.updateTokenCounts(discord, {
      inputTokens: 22_870,
      outputTokens: 1_944,
      reasoningTokens: 512,
      apiCallCount: 5,
      estimatedCostUsd: 0.0833,
    });

    // A fresh CLI session still open.
    at(now - 2 * HOUR);
    const recent = idAt(t, "e7f8a9");
    await store.createSession({ id: recent, source: "cli", model: "hermes-4-405b" });
    await say(recent, "user", "Summarise what changed in the session store this week.");
    await say(
      recent,
      "assistant",
      "Streaming export, forks, usage statistics and a `doctor` command for search indexes.",
    );

    return {
      sessions: await store.sessionCount(),
      messages: await store.messageCount(),
      ids: { dockerRoot, dockerTip, telegram, discord, delegate, oldCron },
    };
  } finally {
    await store.close();
  }
}
