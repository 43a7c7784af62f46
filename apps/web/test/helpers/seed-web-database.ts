import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSessionStore } from "@hermes/store";
import { tempDir } from "./temp.js";

const HOUR = 3600;
const DAY = 24 * HOUR;

/** Stored text that must never run in the page: each variant is asserted away in the DOM. */
export const HOSTILE = {
  script: "<script>window.__pwned = 'script'</script>",
  onerror: "<img src=x onerror=\"window.__pwned='onerror'\">",
  javascriptLink: "[click me](javascript:window.__pwned='link')",
  rawHtml: '<div onclick="window.__pwned=\'click\'" id="raw-html">raw html block</div>',
  iframe: "<iframe src=\"javascript:window.__pwned='iframe'\"></iframe>",
  dataLink: "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
  svg: "<svg><script>window.__pwned='svg'</script></svg>",
  autolink: "<javascript:window.__pwned='autolink'>",
  image: "![tracker](https://example.invalid/pixel.png)",
} as const;

/** Ids of what {@link seedWebDatabase} wrote. */
export interface WebSeed {
  dockerRoot: string;
  dockerTip: string;
  telegram: string;
  discord: string;
  delegate: string;
  branch: string;
  hostile: string;
  long: string;
  oldCron: string;
  /** Sessions in all, and how many are listed on their own (continuations and sub-agents are not). */
  sessions: number;
  listed: number;
  longMessages: number;
}

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  id,
  type: "function",
  function: { name, arguments: JSON.stringify(args) },
});

/**
 * A browser's test history: a compressed Docker chain whose tip is live, a Chinese Telegram
 * chat, a Discord session with a sub-agent and a branch, a session of hostile content, a long
 * session, old cron runs and enough plain sessions for three pages of 50.
 */
export async function seedWebDatabase(path: string, now: number = Date.now() / 1000): Promise<WebSeed> {
  let t = now - 30 * DAY;
  const store = await openSessionStore({ path, clock: () => t, synchronous: "OFF" });
  const at = (epoch: number) => {
    t = epoch;
  };
  const say = (
    sessionId: string,
    role: string,
    content: string | null,
    extra: Record<string, unknown> = {},
  ) => {
    t += 5;
    return store.appendMessage({ sessionId, role, content, ...extra });
  };
  try {
    const oldCron = "20250101_cron_old";
    at(now - 400 * DAY);
    await store.createSession({ id: oldCron, source: "cron", model: "hermes-4-70b" });
    await say(oldCron, "user", "Nightly job: rotate logs");
    await store.endSession(oldCron, "completed");

    for (let i = 0; i < 120; i++) {
      const id = `plain_${String(i).padStart(3, "0")}`;
      at(now - 20 * DAY + i * HOUR);
      await store.createSession({
        id,
        source: i % 3 === 0 ? "cli" : i % 3 === 1 ? "discord" : "slack",
        model: i % 2 ? "gpt-5" : "claude-sonnet-4",
      });
      await say(id, "user", `Plain question number ${i}`);
      await say(id, "assistant", `Plain answer number ${i}`);
      await store.updateTokenCounts(id, {
        inputTokens: 100 + i,
        outputTokens: 50 + i,
        estimatedCostUsd: 0.001 * i,
      });
      await store.endSession(id, "user_exit");
    }

    const long = "long_session";
    at(now - 5 * DAY);
    await store.createSession({ id: long, source: "cli", model: "gpt-5" });
    await store.setSessionTitle(long, "A very long session");
    const longMessages = 450;
    for (let i = 0; i < longMessages; i++) {
      await say(
        long,
        i % 2 === 0 ? "user" : "assistant",
        `Long message ${i}${i === 321 ? " with the word zanzibar" : ""}`,
      );
    }
    await store.endSession(long, "user_exit");

    const telegram = "tg_guilin";
    at(now - 3 * DAY);
    await store.createSession({ id: telegram, source: "telegram", model: "qwen3" });
    await store.setSessionTitle(telegram, "桂林旅行计划");
    await say(telegram, "user", "我想去桂林旅游，有什么推荐？");
    await say(telegram, "assistant", "桂林山水甲天下。推荐漓江竹筏和阳朔西街。");
    await store.updateTokenCounts(telegram, { inputTokens: 800, outputTokens: 300, estimatedCostUsd: 0.02 });
    await store.endSession(telegram, "user_exit");

    const discord = "dc_debug";
    at(now - 2 * DAY);
    await store.createSession({ id: discord, source: "discord", model: "claude-sonnet-4" });
    await store.setSessionTitle(discord, "Debug flaky test");
    await say(discord, "user", "The integration test fails one run in ten");
    const delegate = "dc_debug_agent";
    await store.createSession({
      id: delegate,
      source: "subagent",
      model: "claude-sonnet-4",
      parentSessionId: discord,
    });
    await say(delegate, "user", "Find the flaky test");
    await say(delegate, "assistant", "It is `retry.test.ts`: it sleeps 10 ms and races the timer.");
    await store.endSession(delegate, "completed");
    await say(discord, "assistant", "The sub-agent found it: `retry.test.ts` races a timer.");
    await store.endSession(discord, "branched");
    const branch = "dc_debug_branch";
    t += 60;
    await store.createSession({
      id: branch,
      source: "discord",
      model: "claude-sonnet-4",
      parentSessionId: discord,
    });
    await store.setSessionTitle(branch, "Debug flaky test (other fix)");
    await say(branch, "user", "Try fake timers instead");
    await store.endSession(branch, "user_exit");

    const hostile = "hostile_content";
    at(now - DAY);
    await store.createSession({ id: hostile, source: "cli", model: "gpt-5" });
    await store.setSessionTitle(hostile, "<script>window.__pwned='title'</script> hostile");
    for (const text of Object.values(HOSTILE)) await say(hostile, "user", text);
    await say(
      hostile,
      "assistant",
      `Mixed: ${HOSTILE.script} and ${HOSTILE.javascriptLink}\n\n${HOSTILE.rawHtml}`,
      {
        toolCalls: [call("h1", "<img src=x onerror=\"window.__pwned='toolname'\">", { cmd: HOSTILE.script })],
        reasoning: HOSTILE.onerror,
      },
    );
    await say(hostile, "tool", HOSTILE.svg, {
      toolName: '<b onmouseover="window.__pwned=1">x</b>',
      toolCallId: "h1",
    });
    await store.endSession(hostile, "user_exit");

    const dockerRoot = "docker_root";
    at(now - 2 * HOUR);
    await store.createSession({
      id: dockerRoot,
      source: "cli",
      model: "gpt-5",
      systemPrompt: "You are Hermes.",
    });
    await store.setSessionTitle(dockerRoot, "Fix Docker build");
    await say(dockerRoot, "user", "My docker build fails with `COPY failed: no such file`");
    await say(dockerRoot, "assistant", "Let me look at the Dockerfile.", {
      toolCalls: [call("c1", "terminal", { command: "cat Dockerfile" })],
      reasoning: "The build context probably excludes the file.",
    });
    await say(dockerRoot, "tool", "FROM node:20\nCOPY dist/ /app/\nRUN npm ci", {
      toolName: "terminal",
      toolCallId: "c1",
    });
    await say(
      dockerRoot,
      "assistant",
      "The `dist/` folder is in `.dockerignore`. Build first:\n\n```bash\n# build first, then the image\nnpm run build && docker build -t app:latest .\n```\n\n| step | status |\n|---|---|\n| build | ok |",
    );
    await store.updateTokenCounts(dockerRoot, {
      inputTokens: 5000,
      outputTokens: 1200,
      cacheReadTokens: 3000,
      estimatedCostUsd: 0.12,
    });
    await store.endSession(dockerRoot, "compression");
    const dockerTip = "docker_tip";
    t += 1;
    await store.createSession({ id: dockerTip, source: "cli", model: "gpt-5", parentSessionId: dockerRoot });
    await store.setSessionTitle(dockerTip, "Fix Docker build #2");
    at(now - 60);
    await say(dockerTip, "user", "The docker image builds now; how do I make it smaller?");
    await say(dockerTip, "assistant", "Use a multi-stage build with `node:20-slim` as the final stage.");
    await store.updateTokenCounts(dockerTip, {
      inputTokens: 2000,
      outputTokens: 400,
      estimatedCostUsd: 0.05,
    });

    return {
      dockerRoot,
      dockerTip,
      telegram,
      discord,
      delegate,
      branch,
      hostile,
      long,
      oldCron,
      sessions: 1 + 120 + 1 + 1 + 3 + 1 + 2,
      listed: 1 + 120 + 1 + 1 + 2 + 1 + 1,
      longMessages,
    };
  } finally {
    await store.close();
  }
}

let template: Promise<{ path: string; seed: WebSeed }> | undefined;

/**
 * A private copy of one seeded database (seeded once per test file; the copy is closed and
 * checkpointed, so the file alone holds everything).
 */
export async function seededCopy(dir: string = tempDir()): Promise<{ path: string; seed: WebSeed }> {
  template ??= (async () => {
    const path = join(mkdtempSync(join(tmpdir(), "hermes-web-seed-")), "state.db");
    return { path, seed: await seedWebDatabase(path) };
  })();
  const { path, seed } = await template;
  const copy = join(dir, "state.db");
  cpSync(path, copy);
  return { path: copy, seed };
}
