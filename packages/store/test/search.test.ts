import { openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { referenceIsReliable, referenceSearch } from "../../search/test/helpers/reference-search.js";
import { referenceSchema, schemaOf } from "./helpers/reference-schema.js";
import { copyOfSample } from "./helpers/temp-dir.js";

// Search on the reference's own sample file, compared with the reference's algorithm run on a
// second, raw connection (same SQL text, same sanitizer): ids, order and snippets must agree
// wherever the reference's answer is reliable.

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
async function sample(): Promise<{ store: SessionStore; raw: Database.Database; path: string }> {
  const path = copyOfSample();
  const store = await openSessionStore({ path });
  opened.push(store);
  const raw = new Database(path, { readonly: true });
  afterEach(() => raw.close());
  return { store, raw, path };
}

const HIT_KEYS = [
  "id",
  "session_id",
  "role",
  "snippet",
  "timestamp",
  "tool_name",
  "source",
  "model",
  "session_started",
  "context",
];

describe("searchMessages on the reference's sample: same answers as the reference", () => {
  const queries = [
    "docker",
    "pnpm install",
    "pnpm OR lockfile",
    "docker NOT build",
    '"pnpm install"',
    "deploy*",
    "chat-send",
    "P2.2",
    "fix chat-send bug",
    "simulate.p2.test.ts",
    "call_1", // only in tool_calls JSON
    "search_files", // only in tool_name
    "terminal",
    "OR universal",
    "universal search AND",
    "C++",
    "(problem",
    "记忆断裂", // trigram path
    "记忆断裂 Agent",
    "测试", // the reference's LIKE path; ours: the short-CJK index
    "桂林",
    "记",
    "こんにちは",
    "テスト",
    "안녕",
    "Agent的",
    "。",
    "",
    "   ",
    "***",
  ];
  it.each(queries)("%j", async (q) => {
    const { store, raw } = await sample();
    expect(referenceIsReliable(q)).toBe(true);
    const expected = referenceSearch(raw, q, { limit: 50 });
    const hits = await store.searchMessages(q, { limit: 50 });
    expect(hits.map((h) => ({ id: h.id, snippet: h.snippet }))).toEqual(expected);
  });

  const filters: Array<[string, Record<string, unknown>]> = [
    ["sourceFilter", { sourceFilter: ["cli"] }],
    ["sourceFilter several", { sourceFilter: ["cli", "discord"] }],
    ["sourceFilter []", { sourceFilter: [] }],
    ["excludeSources", { excludeSources: ["cli"] }],
    ["excludeSources []", { excludeSources: [] }],
    ["roleFilter", { roleFilter: ["user"] }],
    ["roleFilter []", { roleFilter: [] }],
    ["combined", { sourceFilter: ["discord", "cli"], excludeSources: ["cli"], roleFilter: ["tool", "user"] }],
    ["limit", { limit: 3 }],
    ["limit 0", { limit: 0 }],
    ["offset", { limit: 5, offset: 4 }],
    ["offset past the end", { limit: 5, offset: 1000 }],
  ];
  for (const q of ["check", "search_files", "测试", "记忆断裂", "universal"]) {
    it.each(filters)(`%s (${q})`, async (_name, f) => {
      const { store, raw } = await sample();
      const expected = referenceSearch(raw, q, { limit: 20, ...f });
      const hits = await store.searchMessages(q, f);
      expect(hits.map((h) => ({ id: h.id, snippet: h.snippet }))).toEqual(expected);
      if (f.sourceFilter !== undefined && (f.sourceFilter as string[]).length === 0) expect(hits).toEqual([]);
    });
  }

  it("hits carry exactly the reference's keys, session fields and the context", async () => {
    const { store } = await sample();
    const [hit] = await store.searchMessages("ERR_PNPM_OUTDATED_LOCKFILE");
    expect(Object.keys(hit ?? {})).toEqual(HIT_KEYS);
    expect(hit).toMatchObject({
      id: 3,
      session_id: "20260101_090000_cli001",
      role: "tool",
      timestamp: 1767225603,
      tool_name: "terminal",
      source: "cli",
      model: "anthropic/claude-sonnet-4.6",
      session_started: 1767225600,
    });
    expect(hit?.context.map((c) => c.role)).toEqual(["assistant", "tool", "assistant"]);
    // The previous message has NULL content (tool calls only): "" in the context.
    expect(hit?.context[0]?.content).toBe("");
    expect(hit?.context[1]?.content).toContain("ERR_PNPM_OUTDATED_LOCKFILE");
  });

  it("every hit of every path has the same keys", async () => {
    const { store } = await sample();
    for (const q of ["docker", "记忆断裂", "测试", "广西 OR 桂林"]) {
      for (const hit of await store.searchMessages(q)) expect(Object.keys(hit)).toEqual(HIT_KEYS);
    }
  });

  it("the first and last messages of a session have a two-message context; a lone message one", async () => {
    const { store } = await sample();
    const [first] = await store.searchMessages('"How do I fix the docker build"');
    expect(first?.context.map((c) => c.role)).toEqual(["user", "assistant"]);
    const [lone] = await store.searchMessages('"universal search test from cron"');
    expect(lone?.context).toEqual([{ role: "user", content: "universal search test from cron" }]);
  });
});

describe("the short-CJK index and the file contract", () => {
  it("opening and English/trigram searches leave the reference's schema untouched", async () => {
    const { store, path } = await sample();
    await store.searchMessages("docker");
    await store.searchMessages("记忆断裂");
    expect(schemaOf(path)).toEqual(referenceSchema());
  });

  it("the first short CJK search adds our objects; every reference object keeps its SQL text", async () => {
    const { store, path } = await sample();
    await store.searchMessages("测试");
    const names = new Set(referenceSchema().map((o) => o.name));
    const schema = schemaOf(path);
    expect(schema.filter((o) => names.has(o.name))).toEqual(referenceSchema());
    const extra = schema
      .filter((o) => !names.has(o.name) && !o.name.startsWith("hermes_search_cjk_"))
      .map((o) => `${o.type} ${o.name}`)
      .sort();
    expect(extra).toEqual([
      "table hermes_search_cjk",
      "table hermes_search_queue",
      "table hermes_search_state",
      "table hermes_search_ts_blocks",
      "trigger hermes_search_queue_delete",
      "trigger hermes_search_queue_insert",
      "trigger hermes_search_queue_update",
    ]);
    // Our triggers are plain SQL: no function call at all.
    for (const o of schema.filter((x) => x.type === "trigger" && !names.has(x.name))) {
      expect(o.sql).toMatch(
        /^CREATE TRIGGER \w+ AFTER (INSERT|UPDATE OF [\w, ]+|DELETE) ON messages BEGIN\s+(INSERT INTO hermes_search_queue\(message_id\) VALUES \((new|old)\.id\);\s+)+END$/,
      );
    }
    await store.close();
    // The reference's open (its schema script and FTS check) still finds everything it needs.
    const db = new Database(path);
    expect(db.prepare("SELECT * FROM messages_fts LIMIT 0").all()).toEqual([]);
    expect(db.prepare("SELECT version FROM schema_version").get()).toEqual({ version: 11 });
    db.close();
  });
});

describe("search limits", () => {
  it.each([
    ["a non-string query", 42, {}],
    ["a query over 4,000 characters", "x".repeat(4001), {}],
    ["more than 64 terms", Array.from({ length: 65 }, (_, i) => `w${i}`).join(" "), {}],
    ["more than 64 CJK terms", Array.from({ length: 65 }, () => "测试").join(" "), {}],
    ["a negative limit", "docker", { limit: -1 }],
    ["a limit over 1,000", "docker", { limit: 1001 }],
    ["a fractional offset", "docker", { offset: 1.5 }],
    ["a sourceFilter that is not a list of strings", "docker", { sourceFilter: "cli" }],
    ["a roleFilter with a number", "docker", { roleFilter: [1] }],
  ])("%s is INVALID_ARGUMENT", async (_name, q, o) => {
    const { store } = await sample();
    await expect(store.searchMessages(q as string, o as never)).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });

  it("the largest allowed query, term count and limit work", async () => {
    const { store } = await sample();
    expect(await store.searchMessages(`docker ${"x".repeat(3993)}`)).toEqual([]);
    const terms = Array.from({ length: 63 }, (_, i) => `w${i}`).join(" OR ");
    expect(
      (await store.searchMessages(`${terms} OR docker`, { limit: 1000 })).map((h) => h.id).sort(),
    ).toEqual([1, 2]);
    // Operators and punctuation-only words are not terms.
    expect(await store.searchMessages(`docker ${"AND ".repeat(200)}`)).toHaveLength(2);
  });
});
