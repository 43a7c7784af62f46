import { join } from "node:path";
import { HermesStoreError, MAX_TEXT_LENGTH, openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "./helpers/temp-dir.js";

// Issue 9, scenario 7: hostile arguments. Every call below is refused with a typed error, and a
// refused call writes nothing: no commit at all reaches the file (PRAGMA data_version, seen from
// another connection, does not move) and the counts stay as they were. Then the documented
// policies that are not refusals: text up to MAX_TEXT_LENGTH is stored exactly, NUL characters
// inside text are preserved, lone surrogates are refused.

// Test-only casts: the point is to pass what the types forbid, as JavaScript callers can.
// biome-ignore lint/suspicious/noExplicitAny: hostile input on purpose
type Loose = any;

let store: SessionStore;
let path: string;
let observer: Database.Database;
let s: Loose;

beforeAll(async () => {
  path = join(tempDir("hermes-args-"), "state.db");
  store = await openSessionStore({ path });
  s = store;
  await store.createSession({ id: "s1", source: "cli" });
  await store.createSession({ id: "s2", source: "cli" });
  await store.appendMessage({ sessionId: "s1", role: "user", content: "hello walrus" });
  await store.setSessionTitle("s1", "first");
  observer = new Database(path, { readonly: true });
});
afterAll(async () => {
  observer.close();
  await store.close();
});

/** Whatever a write would change; `data_version` moves on any other connection's commit. */
function fingerprint(): string {
  const one = (sql: string) => observer.prepare(sql).pluck().get();
  return JSON.stringify({
    dataVersion: observer.pragma("data_version", { simple: true }),
    sessions: one("SELECT count(*) FROM sessions"),
    messages: one("SELECT count(*) FROM messages"),
    maxId: one("SELECT max(id) FROM messages"),
    counters: one(
      "SELECT group_concat(id || ':' || message_count || ':' || tool_call_count || ':' || input_tokens || ':' || coalesce(title, '') || ':' || coalesce(ended_at, ''), ',') FROM sessions",
    ),
    meta: one("SELECT count(*) FROM state_meta"),
  });
}

const circular: Record<string, unknown> = { a: 1 };
circular.self = circular;
const circularList: unknown[] = [];
circularList.push(circularList);
const huge = "x".repeat(50 * 1024 * 1024);
const longQuery = "walrus ".repeat(2_000);
const manyTerms = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" OR ");

const REFUSED: Array<[string, () => Promise<unknown>, string]> = [
  // Text size and Unicode.
  [
    "50 MB content",
    () => s.appendMessage({ sessionId: "s1", role: "user", content: huge }),
    "INVALID_ARGUMENT",
  ],
  ["50 MB system prompt", () => s.updateSystemPrompt("s1", huge), "INVALID_ARGUMENT"],
  [
    "lone high surrogate in content",
    () => s.appendMessage({ sessionId: "s1", role: "user", content: "a\uD800b" }),
    "INVALID_ARGUMENT",
  ],
  [
    "lone low surrogate in content",
    () => s.appendMessage({ sessionId: "s1", role: "user", content: "\uDC00" }),
    "INVALID_ARGUMENT",
  ],
  [
    "lone surrogate in a session id",
    () => s.createSession({ id: "x\uD83D", source: "cli" }),
    "INVALID_ARGUMENT",
  ],
  ["NUL in a session id", () => s.createSession({ id: "a\0b", source: "cli" }), "INVALID_ARGUMENT"],
  // Wrong types: numbers for strings, objects for ids, arrays for options.
  ["numeric session id", () => s.createSession({ id: 42, source: "cli" }), "INVALID_ARGUMENT"],
  ["object session id", () => s.createSession({ id: { id: "s9" }, source: "cli" }), "INVALID_ARGUMENT"],
  ["numeric source", () => s.createSession({ id: "s9", source: 7 }), "INVALID_ARGUMENT"],
  ["null session input", () => s.createSession(null), "INVALID_ARGUMENT"],
  ["array session input", () => s.createSession(["s9", "cli"]), "INVALID_ARGUMENT"],
  ["string session input", () => s.createSession("s9"), "INVALID_ARGUMENT"],
  ["ensureSession object id", () => s.ensureSession({ id: {} }), "INVALID_ARGUMENT"],
  ["endSession numeric id", () => s.endSession(5, "done"), "INVALID_ARGUMENT"],
  ["endSession object reason", () => s.endSession("s1", { why: 1 }), "INVALID_ARGUMENT"],
  [
    "numeric sessionId",
    () => s.appendMessage({ sessionId: 1, role: "user", content: "x" }),
    "INVALID_ARGUMENT",
  ],
  [
    "object sessionId",
    () => s.appendMessage({ sessionId: {}, role: "user", content: "x" }),
    "INVALID_ARGUMENT",
  ],
  ["numeric role", () => s.appendMessage({ sessionId: "s1", role: 3, content: "x" }), "INVALID_ARGUMENT"],
  ["empty role", () => s.appendMessage({ sessionId: "s1", role: "", content: "x" }), "INVALID_ARGUMENT"],
  [
    "numeric content",
    () => s.appendMessage({ sessionId: "s1", role: "user", content: 12 }),
    "INVALID_ARGUMENT",
  ],
  [
    "object content",
    () => s.appendMessage({ sessionId: "s1", role: "user", content: { t: 1 } }),
    "INVALID_ARGUMENT",
  ],
  [
    "array content",
    () => s.appendMessage({ sessionId: "s1", role: "user", content: ["x"] }),
    "INVALID_ARGUMENT",
  ],
  [
    "string tokenCount",
    () => s.appendMessage({ sessionId: "s1", role: "user", tokenCount: "5" }),
    "INVALID_ARGUMENT",
  ],
  [
    "NaN tokenCount",
    () => s.appendMessage({ sessionId: "s1", role: "user", tokenCount: Number.NaN }),
    "INVALID_ARGUMENT",
  ],
  [
    "fractional tokenCount",
    () => s.appendMessage({ sessionId: "s1", role: "user", tokenCount: 1.5 }),
    "INVALID_ARGUMENT",
  ],
  ["array as the message", () => s.appendMessage(["s1", "user", "x"]), "INVALID_ARGUMENT"],
  [
    "circular toolCalls",
    () => s.appendMessage({ sessionId: "s1", role: "assistant", toolCalls: circularList }),
    "INVALID_ARGUMENT",
  ],
  [
    "circular toolCalls object",
    () => s.appendMessage({ sessionId: "s1", role: "assistant", toolCalls: circular }),
    "INVALID_ARGUMENT",
  ],
  [
    "circular reasoningDetails",
    () => s.appendMessage({ sessionId: "s1", role: "assistant", reasoningDetails: circular }),
    "INVALID_ARGUMENT",
  ],
  [
    "BigInt in toolCalls",
    () => s.appendMessage({ sessionId: "s1", role: "assistant", toolCalls: [1n] }),
    "INVALID_ARGUMENT",
  ],
  [
    "string toolCalls",
    () => s.appendMessage({ sessionId: "s1", role: "assistant", toolCalls: "[]" }),
    "INVALID_ARGUMENT",
  ],
  [
    "function codexMessageItems",
    () => s.appendMessage({ sessionId: "s1", role: "assistant", codexMessageItems: () => 1 }),
    "INVALID_ARGUMENT",
  ],
  [
    "a batch with one bad message writes none",
    () =>
      s.appendMessages([
        { sessionId: "s1", role: "user", content: "good" },
        { sessionId: "s1", role: "user", content: 5 },
      ]),
    "INVALID_ARGUMENT",
  ],
  [
    "a batch with an unknown session writes none",
    () =>
      s.appendMessages([
        { sessionId: "s1", role: "user", content: "good" },
        { sessionId: "nope", role: "user", content: "x" },
      ]),
    "SESSION_NOT_FOUND",
  ],
  [
    "an object as the batch",
    () => s.appendMessages({ 0: { sessionId: "s1", role: "user" } }),
    "INVALID_ARGUMENT",
  ],
  [
    "a batch of 10 001",
    () => s.appendMessages(Array.from({ length: 10_001 }, () => ({ sessionId: "s1", role: "user" }))),
    "INVALID_ARGUMENT",
  ],
  ["updateTokenCounts string", () => s.updateTokenCounts("s1", { inputTokens: "5" }), "INVALID_ARGUMENT"],
  [
    "updateTokenCounts NaN",
    () => s.updateTokenCounts("s1", { outputTokens: Number.NaN }),
    "INVALID_ARGUMENT",
  ],
  [
    "updateTokenCounts Infinity cost",
    () => s.updateTokenCounts("s1", { estimatedCostUsd: Infinity }),
    "INVALID_ARGUMENT",
  ],
  ["updateTokenCounts array options", () => s.updateTokenCounts("s1", [1, 2]), "INVALID_ARGUMENT"],
  ["setSessionTitle number", () => s.setSessionTitle("s1", 42), "INVALID_ARGUMENT"],
  ["setSessionTitle object id", () => s.setSessionTitle({}, "t"), "INVALID_ARGUMENT"],
  ["setMeta numeric key", () => s.setMeta(5, "v"), "INVALID_ARGUMENT"],
  ["setMeta object value", () => s.setMeta("k", { v: 1 }), "INVALID_ARGUMENT"],
  ["deleteSession object id", () => s.deleteSession({ id: "s1" }), "INVALID_ARGUMENT"],
  ["clearMessages numeric id", () => s.clearMessages(1), "INVALID_ARGUMENT"],
  ["pruneSessions negative days", () => s.pruneSessions({ olderThanDays: -1 }), "INVALID_ARGUMENT"],
  ["pruneSessions NaN days", () => s.pruneSessions({ olderThanDays: Number.NaN }), "INVALID_ARGUMENT"],
  // Reads: limits, offsets, queries.
  ["getMessages numeric id", () => s.getMessages(5), "INVALID_ARGUMENT"],
  ["getSession object id", () => s.getSession({}), "INVALID_ARGUMENT"],
  ["search numeric query", () => s.searchMessages(5), "INVALID_ARGUMENT"],
  ["search limit 1e9", () => s.searchMessages("walrus", { limit: 1e9 }), "INVALID_ARGUMENT"],
  ["search negative limit", () => s.searchMessages("walrus", { limit: -1 }), "INVALID_ARGUMENT"],
  ["search NaN limit", () => s.searchMessages("walrus", { limit: Number.NaN }), "INVALID_ARGUMENT"],
  ["search negative offset", () => s.searchMessages("walrus", { offset: -5 }), "INVALID_ARGUMENT"],
  ["search NaN offset", () => s.searchMessages("walrus", { offset: Number.NaN }), "INVALID_ARGUMENT"],
  ["search array options", () => s.searchMessages("walrus", ["cli"]), "INVALID_ARGUMENT"],
  [
    "search string sourceFilter",
    () => s.searchMessages("walrus", { sourceFilter: "cli" }),
    "INVALID_ARGUMENT",
  ],
  ["search numeric roleFilter", () => s.searchMessages("walrus", { roleFilter: [1] }), "INVALID_ARGUMENT"],
  ["search 14 000-character query", () => s.searchMessages(longQuery), "INVALID_ARGUMENT"],
  ["search 200 terms", () => s.searchMessages(manyTerms), "INVALID_ARGUMENT"],
  ["searchSessions limit 1e9", () => s.searchSessions({ limit: 1e9 }), "INVALID_ARGUMENT"],
  ["searchSessions negative offset", () => s.searchSessions({ offset: -1 }), "INVALID_ARGUMENT"],
  ["listSessionsRich NaN limit", () => s.listSessionsRich({ limit: Number.NaN }), "INVALID_ARGUMENT"],
  ["listSessionsRich limit 1e9", () => s.listSessionsRich({ limit: 1e9 }), "INVALID_ARGUMENT"],
  ["listSessionsRich negative offset", () => s.listSessionsRich({ offset: -10 }), "INVALID_ARGUMENT"],
  ["listSessionsRich array options", () => s.listSessionsRich([]), "INVALID_ARGUMENT"],
  [
    "conversation window negative count",
    () => s.getConversationWindow("s1", { lastMessages: -1 }),
    "INVALID_ARGUMENT",
  ],
  [
    "conversation window NaN tokens",
    () => s.getConversationWindow("s1", { maxTokens: Number.NaN }),
    "INVALID_ARGUMENT",
  ],
  [
    "iterMessages negative afterId",
    async () => {
      for await (const _ of s.iterMessages("s1", { afterId: -1 })) {
        // consumed only to run the iterator
      }
    },
    "INVALID_ARGUMENT",
  ],
  ["forkSession object id", () => s.forkSession({}), "INVALID_ARGUMENT"],
  ["usageStats unknown grouping", () => s.usageStats({ groupBy: "planet" }), "INVALID_ARGUMENT"],
];

describe("hostile arguments are refused, typed, and write nothing (issue 9, scenario 7)", () => {
  it.each(REFUSED)("%s", async (_name, call, code) => {
    const before = fingerprint();
    let caught: unknown;
    try {
      await call();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(HermesStoreError);
    expect((caught as HermesStoreError).code).toBe(code);
    expect(fingerprint()).toBe(before);
  });

  it("the store still works after every refusal", async () => {
    await store.appendMessage({ sessionId: "s2", role: "user", content: "still fine" });
    expect((await store.getMessages("s2")).map((m) => m.content)).toEqual(["still fine"]);
  });
});

describe("documented policies for text (issue 9, scenario 7)", () => {
  it("MAX_TEXT_LENGTH is 16 Mi UTF-16 units: one unit more is refused", async () => {
    expect(MAX_TEXT_LENGTH).toBe(16 * 1024 * 1024);
    const before = fingerprint();
    await expect(
      store.appendMessage({ sessionId: "s2", role: "tool", content: "y".repeat(MAX_TEXT_LENGTH + 1) }),
    ).rejects.toMatchObject({ code: "INVALID_ARGUMENT", argument: "content" });
    expect(fingerprint()).toBe(before);
  });

  it("a 15 MB message is stored and read back intact, and found by search", async () => {
    // Varied text (not one repeated character) so that a truncation or re-encoding shows.
    const unit = "tool output line 0123456789 ünïcödé 日本語 🦭\n";
    const content = unit.repeat(Math.ceil((15 * 1024 * 1024) / unit.length)).slice(0, 15 * 1024 * 1024);
    expect(content.length).toBe(15 * 1024 * 1024);
    const id = await store.appendMessage({ sessionId: "s2", role: "tool", content: `bigpayload ${content}` });
    const row = (await store.getMessages("s2")).find((m) => m.id === id);
    expect(row?.content?.length).toBe(content.length + "bigpayload ".length);
    expect(row?.content === `bigpayload ${content}`).toBe(true);
    expect((await store.searchMessages("bigpayload")).map((h) => h.id)).toEqual([id]);
  });

  it("NUL characters inside text are preserved exactly (only ids refuse them)", async () => {
    const content = "before\0after\0\0end";
    const id = await store.appendMessage({
      sessionId: "s2",
      role: "assistant",
      content,
      toolCalls: [{ id: "c\0", function: { name: "t", arguments: '{"a":"\\u0000"}' } }],
      reasoning: "r\0r",
    });
    const row = (await store.getMessages("s2")).find((m) => m.id === id);
    expect(row?.content).toBe(content);
    expect(row?.reasoning).toBe("r\0r");
    expect(row?.tool_calls).toEqual([{ id: "c\0", function: { name: "t", arguments: '{"a":"\\u0000"}' } }]);
    // Another SQLite client reads the same bytes (length counts the NULs).
    expect(
      observer.prepare("SELECT length(CAST(content AS BLOB)) FROM messages WHERE id = ?").pluck().get(id),
    ).toBe(Buffer.byteLength(content));
    // Titles are the exception: the reference's sanitizer removes control characters, NUL included.
    await store.setSessionTitle("s2", "title\0with nul");
    expect(await store.getSessionTitle("s2")).toBe("titlewith nul");
  });

  it("a well-formed surrogate pair (emoji) is stored; only lone surrogates are refused", async () => {
    const id = await store.appendMessage({ sessionId: "s2", role: "user", content: "seal 🦭 ok" });
    expect((await store.getMessages("s2")).find((m) => m.id === id)?.content).toBe("seal 🦭 ok");
  });
});
