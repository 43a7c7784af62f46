import { join } from "node:path";
import { openSessionStore, type SessionStore, sessionToMarkdown, toAnthropicMessages } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { copyOfSample, tempDir } from "./helpers/temp-dir.js";

// Forks, lineage, statistics and conversation formats on a copy of the file the reference wrote.

const CLI001 = "20260101_090000_cli001"; // "Fix Docker Build", ended by compression
const CLI002 = "20260101_093000_cli002"; // its continuation, "Fix Docker Build #2"

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

async function sample(): Promise<{ store: SessionStore; path: string }> {
  const path = copyOfSample();
  const store = await openSessionStore({ path });
  opened.push(store);
  return { store, path };
}

function checkFile(path: string): void {
  const db = new Database(path, { readonly: false });
  try {
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(db.pragma("foreign_key_check")).toEqual([]);
    for (const t of ["messages_fts", "messages_fts_trigram"]) {
      db.prepare(`INSERT INTO ${t}(${t}) VALUES ('integrity-check')`).run();
    }
  } finally {
    db.close();
  }
}

describe("forkSession on the reference's sample", () => {
  it("titles the fork after the lineage (#3 after #2), copies rows and keeps the file consistent", async () => {
    const { store, path } = await sample();
    const parentRows = await store.getMessages(CLI001);
    const fork = await store.forkSession(CLI001);
    expect(fork.title).toBe("Fix Docker Build #3");
    expect(fork.parent_session_id).toBe(CLI001);
    expect(fork.message_count).toBe(4);
    expect(fork.tool_call_count).toBe(1);
    expect(JSON.parse(fork.model_config!)).toEqual({
      temperature: 0.2,
      max_tokens: 4096,
      _branched_from: CLI001,
    });
    const rows = await store.getMessages(fork.id);
    expect(rows.map((r) => [r.role, r.content, r.tool_calls, r.timestamp])).toEqual(
      parentRows.map((r) => [r.role, r.content, r.tool_calls, r.timestamp]),
    );
    // The copies are indexed: a word only in this conversation now matches twice.
    const db = new Database(path, { readonly: true });
    const hits = db
      .prepare(
        "SELECT m.session_id FROM messages_fts f JOIN messages m ON m.id = f.rowid WHERE messages_fts MATCH 'lockfile' ORDER BY m.id",
      )
      .all() as Array<{ session_id: string }>;
    db.close();
    expect(hits.map((h) => h.session_id)).toContain(fork.id);
    expect(hits.filter((h) => h.session_id === CLI001).length).toBe(
      hits.filter((h) => h.session_id === fork.id).length,
    );
    checkFile(path);
  });

  it("forks at a message: the copy stops there, counters follow", async () => {
    const { store, path } = await sample();
    const rows = await store.getMessages(CLI001);
    const fork = await store.forkSession(CLI001, { atMessageId: rows[0]!.id, newId: "fork-at-1" });
    expect(fork.message_count).toBe(1);
    expect(fork.tool_call_count).toBe(0);
    expect((await store.getMessages("fork-at-1")).map((r) => r.content)).toEqual([rows[0]!.content]);
    checkFile(path);
  });

  it("a forked session reads back through the lineage and the listing rules", async () => {
    const { store } = await sample();
    const fork = await store.forkSession(CLI002);
    const lineage = await store.getLineage(fork.id);
    expect(lineage?.session.link).toBe("branch");
    expect(lineage?.ancestors.map((n) => [n.id, n.link])).toEqual([
      [CLI001, null],
      [CLI002, "compression"],
    ]);
    expect(lineage?.root_id).toBe(CLI001);
  });
});

describe("getLineage on the reference's sample", () => {
  it("names each kind of link the reference makes", async () => {
    const { store } = await sample();
    expect((await store.getLineage(CLI002))?.session.link).toBe("compression");
    expect((await store.getLineage("20260104_100500_cli004"))?.session.link).toBe("branch");
    // Started while its parent was still live: a sub-agent run.
    expect((await store.getLineage("20260105_090100_cli006"))?.session.link).toBe("delegate");
    const root = await store.getLineage(CLI001);
    expect(root?.session.link).toBeNull();
    expect(root?.descendants.map((n) => [n.id, n.link, n.depth, n.title])).toEqual([
      [CLI002, "compression", 1, "Fix Docker Build #2"],
    ]);
  });
});

describe("usageStats on the reference's sample", () => {
  it("matches a hand-written aggregate over the same file", async () => {
    const { store, path } = await sample();
    const db = new Database(path, { readonly: true });
    const expected = db
      .prepare(
        `SELECT source AS "group", COUNT(*) AS sessions, SUM(message_count) AS messages,
           SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens
         FROM sessions GROUP BY source ORDER BY source`,
      )
      .all();
    db.close();
    const rows = await store.usageStats({ groupBy: "source" });
    expect(
      rows.map(({ group, sessions, messages, input_tokens, output_tokens }) => ({
        group,
        sessions,
        messages,
        input_tokens,
        output_tokens,
      })),
    ).toEqual(expected);
    expect(rows.reduce((n, r) => n + r.messages, 0)).toBe(109);
  });
});

describe("conversation formats on the reference's sample", () => {
  it("renders Markdown with the title, metadata, roles, tool calls and results", async () => {
    const { store } = await sample();
    const md = await store.exportSessionMarkdown(CLI001);
    expect(md).not.toBeNull();
    expect(md!.startsWith("# Fix Docker Build\n")).toBe(true);
    expect(md).toContain("| Source | cli |");
    expect(md).toContain("| Model | anthropic/claude-sonnet-4.6 |");
    expect(md).toContain("2026-01-01T00:30:00.000Z (compression)");
    expect(md).toContain("## User · 2026-01-01T00:00:01.000Z");
    expect(md).toMatch(/\*\*Tool call\*\* `terminal` `call_1`/);
    expect(md).toContain("## Tool result · `terminal`");
    expect(md).toContain("ERR_PNPM_OUTDATED_LOCKFILE");
    expect(await store.exportSessionMarkdown("nope")).toBeNull();
  });

  it("fences content longer than any backtick run inside it", () => {
    const md = sessionToMarkdown({
      id: "x",
      source: "cli",
      user_id: null,
      model: null,
      model_config: null,
      system_prompt: null,
      parent_session_id: null,
      started_at: 0,
      ended_at: null,
      end_reason: null,
      message_count: 1,
      tool_call_count: 0,
      input_tokens: 0,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      billing_provider: null,
      billing_base_url: null,
      billing_mode: null,
      estimated_cost_usd: null,
      actual_cost_usd: null,
      cost_status: null,
      cost_source: null,
      pricing_version: null,
      title: null,
      api_call_count: 0,
      messages: [
        {
          id: 1,
          session_id: "x",
          role: "tool",
          content: "```\n# not a heading\n```",
          tool_call_id: "c",
          tool_calls: null,
          tool_name: "cat",
          timestamp: 1,
          token_count: null,
          finish_reason: null,
          reasoning: null,
          reasoning_content: null,
          reasoning_details: null,
          codex_reasoning_items: null,
          codex_message_items: null,
        },
      ],
    });
    expect(md).toContain("````\n```\n# not a heading\n```\n````");
    expect(md.startsWith("# Session x\n")).toBe(true);
  });

  it("gives the Anthropic shape: system apart, tool_use and tool_result blocks, alternating roles", async () => {
    const { store } = await sample();
    await store.updateSystemPrompt(CLI001, "You are Hermes.");
    const conv = await store.getMessagesAsAnthropic(CLI001);
    expect(conv.system).toBe("You are Hermes.");
    expect(conv.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    const use = conv.messages[1]!.content[0]!;
    expect(use).toMatchObject({ type: "tool_use", id: "call_1", name: "terminal" });
    expect(conv.messages[2]!.content[0]).toMatchObject({ type: "tool_result", tool_use_id: "call_1" });
    // The discord session: each assistant turn makes two calls, the history holds one result;
    // the other is answered with an error result, so the API accepts the conversation.
    const discord = await store.getMessagesAsAnthropic("20260103_080000_dc0001");
    discord.messages.forEach((m, i) => {
      if (i > 0) expect(m.role).not.toBe(discord.messages[i - 1]!.role);
      const uses = m.content.filter((b) => b.type === "tool_use").map((b) => (b as { id: string }).id);
      if (uses.length === 0) return;
      const next = discord.messages[i + 1];
      const results = (next?.content ?? [])
        .filter((b) => b.type === "tool_result")
        .map((b) => (b as { tool_use_id: string }).tool_use_id);
      expect(results).toEqual(uses);
    });
    expect(discord.messages[2]!.content[1]).toEqual({
      type: "tool_result",
      tool_use_id: "c0b",
      content: "No result was recorded for this tool call.",
      is_error: true,
    });
    expect(toAnthropicMessages(await store.getMessagesAsConversation(CLI001), "You are Hermes.")).toEqual(
      conv,
    );
  });

  it("keeps unparsable tool arguments and unmatched results rather than losing them", () => {
    const conv = toAnthropicMessages([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "a", function: { name: "t", arguments: "{oops" } }],
      },
      { role: "tool", content: "r", tool_call_id: "a" },
      { role: "tool", content: "r2", tool_call_id: "b" },
      { role: "user", content: "next" },
      { role: "system", content: "late note" },
    ]);
    expect(conv).toEqual({
      system: "late note",
      messages: [
        { role: "user", content: [{ type: "text", text: "go" }] },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "a", name: "t", input: { _raw_arguments: "{oops" } }],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "a", content: "r" },
            // No call "b" before it: kept as text, since the API rejects an unmatched result.
            { type: "text", text: "Tool result (b):\nr2" },
            { type: "text", text: "next" },
          ],
        },
      ],
    });
  });
});

describe("exports of a big session stay bounded", () => {
  it("exportJsonl writes a 20,000-message session line by line, identical to JSON.stringify of it", async () => {
    const path = join(tempDir(), "state.db");
    const store = await openSessionStore({ path });
    opened.push(store);
    await store.createSession({ id: "big", source: "cli" });
    const db = new Database(path);
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
      INSERT INTO messages (session_id, role, content, timestamp) SELECT 'big', 'user', 'message ' || i, 1000 + i FROM n`);
    db.exec("UPDATE sessions SET message_count = 20000 WHERE id = 'big'");
    db.close();
    const file = join(tempDir(), "big.jsonl");
    const report = await store.exportJsonl(file);
    expect(report).toMatchObject({ sessions: 1, messages: 20000 });
    const [, line] = (await import("node:fs")).readFileSync(file, "utf8").split("\n");
    const all = [];
    for await (const s of store.exportStream()) all.push(s);
    expect(line).toBe(JSON.stringify(all[0]));
    const window = await store.getConversationWindow("big", { lastMessages: 3 });
    expect(window.messages.map((m) => m.content)).toEqual([
      "message 19998",
      "message 19999",
      "message 20000",
    ]);
    expect(window.omittedMessages).toBe(19997);
  });
});
