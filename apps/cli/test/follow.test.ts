import { spawn } from "node:child_process";
import { openSessionStore } from "@hermes/store";
import { describe, expect, it } from "vitest";
import { CLI_MAIN, copyOfSample, tempDir } from "./helpers/cli.js";

/** The CLI as a long-running child: its output so far, a wait for text, and Ctrl-C. */
function startCli(args: string[]) {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], {
    env: { ...process.env, TZ: "UTC", HERMES_HOME: tempDir("hermes-cli-home-"), NO_COLOR: "1" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    output: () => stdout,
    async waitFor(text: string | RegExp): Promise<void> {
      const deadline = Date.now() + 20_000;
      const seen = () => (typeof text === "string" ? stdout.includes(text) : text.test(stdout));
      while (!seen()) {
        if (Date.now() > deadline) throw new Error(`no ${String(text)} in: ${stdout} ${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async interrupt(): Promise<{ code: number | null; stderr: string }> {
      child.kill("SIGINT");
      return { code: await exited, stderr };
    },
  };
}

describe("follow", { timeout: 120_000 }, () => {
  it("prints a session's last messages, then each one another process appends, until Ctrl-C", async () => {
    const db = copyOfSample();
    const follow = startCli([
      "--db",
      db,
      "follow",
      "Fix Docker Build #2",
      "--lines",
      "2",
      "--interval",
      "20",
    ]);
    await follow.waitFor("── assistant");
    const before = follow.output();
    expect(before).toMatch(/^Fix Docker Build #2 {2}20260101_093000_cli002\n/);
    expect(before.match(/^── /gm)).toHaveLength(2);
    const store = await openSessionStore({ path: db });
    try {
      await store.appendMessage({
        sessionId: "20260101_093000_cli002",
        role: "user",
        content: "and now the cache?",
      });
      await follow.waitFor("and now the cache?");
      // Another session's messages are not this one's.
      await store.appendMessage({ sessionId: "20260104_100500_cli004", role: "user", content: "elsewhere" });
      await store.appendMessage({
        sessionId: "20260101_093000_cli002",
        role: "assistant",
        content: "cached.",
      });
      await follow.waitFor("cached.");
    } finally {
      await store.close();
    }
    const { code, stderr } = await follow.interrupt();
    expect(code).toBe(0);
    expect(stderr).toBe("");
    const after = follow.output().slice(before.length);
    expect(after).toMatch(/^── user #\d+ .*\nand now the cache\?\n\n── assistant #\d+ .*\ncached\.\n\n$/);
    expect(after).not.toContain("elsewhere");
  });

  it("without a session: every new session and message; --json prints one message per line", async () => {
    const db = copyOfSample();
    const all = startCli(["--db", db, "follow", "--interval", "20"]);
    const json = startCli(["--db", db, "follow", "--interval", "20", "--json"]);
    const store = await openSessionStore({ path: db });
    // A feed starts at the highest message id when the process gets there: write until both
    // have seen a write, then the messages the test is about.
    await store.createSession({ id: "warm-up", source: "cli" });
    for (let i = 0; !all.output().includes("ping") || !json.output().includes("ping"); i++) {
      if (i > 200) throw new Error(`the followers never started: ${all.output()} ${json.output()}`);
      await store.appendMessage({ sessionId: "warm-up", role: "user", content: `ping ${i}` });
      await new Promise((r) => setTimeout(r, 100));
    }
    await store.appendMessage({ sessionId: "warm-up", role: "user", content: "last ping" });
    await all.waitFor("last ping");
    await json.waitFor("last ping");
    const [allBefore, jsonBefore] = [all.output().length, json.output().length];
    try {
      await store.createSession({ id: "live-telegram", source: "telegram" });
      await store.appendMessage({ sessionId: "live-telegram", role: "user", content: "hi from the phone" });
      await store.appendMessage({
        sessionId: "20260104_100500_cli004",
        role: "assistant",
        content: "back here",
      });
      await all.waitFor("back here");
      await json.waitFor("back here");
    } finally {
      await store.close();
    }
    expect((await all.interrupt()).code).toBe(0);
    expect((await json.interrupt()).code).toBe(0);
    expect(all.output().slice(allBefore)).toMatch(
      // Each speaker by its name (`sessionDisplayName`: here the first user message) and id.
      /^━━ new session live-telegram telegram\n\n━━ hi from the phone {2}live-telegram\n\n── user #\d+ .*\nhi from the phone\n\n━━ Alternative plan: [^\n]+ {2}20260104_100500_cli004\n\n── assistant #\d+ .*\nback here\n\n$/,
    );
    const lines = json
      .output()
      .slice(jsonBefore)
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { session_id: string; content: string });
    expect(lines.map((m) => [m.session_id, m.content])).toEqual([
      ["live-telegram", "hi from the phone"],
      ["20260104_100500_cli004", "back here"],
    ]);
  });
});
