import type { HermesStoreError, SessionStore } from "@hermes/core";
import { describe, expect, it } from "vitest";
import { type ContractSuite, manualClock, rejection } from "../harness.js";

/** The error a promise rejects with (fails the test when it resolves). */
const T0 = 1_767_225_600;

/** The session's row; fails the test when it is missing. */
async function row(store: SessionStore, id: string) {
  const s = await store.getSession(id);
  if (s === null) throw new Error(`session ${id} is missing`);
  return s;
}

/** createSession … updateTokenCounts, getSession, resolveSessionId, counts (SPEC §5 "Sessions"). */
export const sessionsContract: ContractSuite = (backend) => {
  describe(`sessions [${backend.name}]`, () => {
    describe("createSession", () => {
      it("stores every given column, started_at from the clock, counters at their defaults", async () => {
        const clock = manualClock(T0);
        const store = await backend.open({ clock });
        await store.createSession({ id: "p", source: "cli" });
        clock.set(T0 + 100);
        const id = await store.createSession({
          id: "s1",
          source: "telegram",
          model: "gpt-x",
          modelConfig: { temperature: 0.5, tools: ["a"] },
          systemPrompt: "be nice",
          userId: "u1",
          parentSessionId: "p",
        });
        expect(id).toBe("s1");
        const s = await row(store, "s1");
        expect(s).toEqual({
          id: "s1",
          source: "telegram",
          user_id: "u1",
          model: "gpt-x",
          model_config: expect.any(String),
          system_prompt: "be nice",
          parent_session_id: "p",
          started_at: s.started_at,
          ended_at: null,
          end_reason: null,
          message_count: 0,
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
        });
        expect(JSON.parse(s.model_config ?? "null")).toEqual({ temperature: 0.5, tools: ["a"] });
        expect(s.started_at).toBeGreaterThan(T0 + 100);
        expect(s.started_at).toBeLessThan(T0 + 101);
      });

      it.each([
        ["an empty object", {}],
        ["null", null],
        ["absent", undefined],
      ])("model_config is NULL when modelConfig is %s", async (_label, modelConfig) => {
        const store = await backend.open();
        await store.createSession({ id: "s", source: "cli", modelConfig });
        expect((await row(store, "s")).model_config).toBeNull();
      });

      it("first write wins: creating an existing id returns it and changes nothing", async () => {
        const clock = manualClock(T0);
        const store = await backend.open({ clock });
        await store.createSession({ id: "s1", source: "cli", model: "m1", systemPrompt: "one" });
        const before = await row(store, "s1");
        clock.advance(3600);
        const again = await store.createSession({
          id: "s1",
          source: "telegram",
          model: "m2",
          modelConfig: { x: 1 },
          systemPrompt: "two",
          userId: "u2",
        });
        expect(again).toBe("s1");
        expect(await row(store, "s1")).toEqual(before);
        expect(await store.sessionCount()).toBe(1);
      });

      it("first write wins even when the second call names an unknown parent", async () => {
        const store = await backend.open();
        await store.createSession({ id: "s1", source: "cli" });
        await expect(store.createSession({ id: "s1", source: "cli", parentSessionId: "nope" })).resolves.toBe(
          "s1",
        );
        expect((await row(store, "s1")).parent_session_id).toBeNull();
      });

      it("an unknown parent is SESSION_NOT_FOUND and creates nothing", async () => {
        const store = await backend.open();
        const error = await rejection(
          store.createSession({ id: "child", source: "cli", parentSessionId: "ghost" }),
        );
        expect(error.code).toBe("SESSION_NOT_FOUND");
        expect((error as HermesStoreError & { sessionId: string }).sessionId).toBe("ghost");
        expect(await store.getSession("child")).toBeNull();
        expect(await store.sessionCount()).toBe(0);
        // The store stays usable after the rolled-back write.
        await store.createSession({ id: "child", source: "cli" });
        expect(await store.sessionCount()).toBe(1);
      });

      it.each([
        ["an empty id", { id: "", source: "cli" }],
        ["a non-string id", { id: 42, source: "cli" }],
        ["an empty source", { id: "s", source: "" }],
        ["a NUL in the id", { id: "a\u0000b", source: "cli" }],
        ["an array modelConfig", { id: "s", source: "cli", modelConfig: [1] }],
        ["a string modelConfig", { id: "s", source: "cli", modelConfig: "{}" }],
        ["a modelConfig JSON cannot hold", { id: "s", source: "cli", modelConfig: { n: 10n } }],
        ["a non-string model", { id: "s", source: "cli", model: 3 }],
      ])("%s is INVALID_ARGUMENT and stores nothing", async (_label, input) => {
        const store = await backend.open();
        const error = await rejection(store.createSession(input as never));
        expect(error.code).toBe("INVALID_ARGUMENT");
        expect(await store.sessionCount()).toBe(0);
      });
    });

    describe("ensureSession", () => {
      it("creates a minimal row with source 'unknown' by default", async () => {
        const clock = manualClock(T0);
        const store = await backend.open({ clock });
        await store.ensureSession({ id: "e1" });
        await store.ensureSession({ id: "e2", source: "cron", model: "m" });
        const e1 = await row(store, "e1");
        expect(e1).toMatchObject({
          source: "unknown",
          model: null,
          parent_session_id: null,
          message_count: 0,
        });
        expect(e1.started_at).toBeGreaterThan(T0);
        expect(await row(store, "e2")).toMatchObject({ source: "cron", model: "m" });
      });

      it("never overwrites an existing session, not even to backfill the model", async () => {
        const clock = manualClock(T0);
        const store = await backend.open({ clock });
        await store.createSession({ id: "s1", source: "cli", systemPrompt: "p" });
        const before = await row(store, "s1");
        clock.advance(60);
        await store.ensureSession({ id: "s1", source: "telegram", model: "m" });
        expect(await row(store, "s1")).toEqual(before);
      });

      it("an empty id is INVALID_ARGUMENT", async () => {
        const store = await backend.open();
        expect((await rejection(store.ensureSession({ id: "" }))).code).toBe("INVALID_ARGUMENT");
      });
    });

    describe("endSession and reopenSession", () => {
      it("records ended_at (now) and the reason", async () => {
        const clock = manualClock(T0);
        const store = await backend.open({ clock });
        await store.createSession({ id: "s1", source: "cli" });
        clock.set(T0 + 500);
        await store.endSession("s1", "user_exit");
        const s = await row(store, "s1");
        expect(s.end_reason).toBe("user_exit");
        expect(s.ended_at).toBeGreaterThanOrEqual(T0 + 500);
        expect(s.ended_at).toBeLessThan(T0 + 501);
      });

      it("first end wins: a later end changes neither the time nor the reason", async () => {
        const clock = manualClock(T0);
        const store = await backend.open({ clock });
        await store.createSession({ id: "s1", source: "cli" });
        await store.endSession("s1", "compression");
        const first = await row(store, "s1");
        clock.advance(1000);
        await store.endSession("s1", "user_exit");
        const after = await row(store, "s1");
        expect(after.end_reason).toBe("compression");
        expect(after.ended_at).toBe(first.ended_at);
      });

      it("ending an unknown session is a no-op that creates nothing", async () => {
        const store = await backend.open();
        await store.endSession("ghost", "user_exit");
        expect(await store.getSession("ghost")).toBeNull();
        expect(await store.sessionCount()).toBe(0);
      });

      it("reopen clears ended_at and end_reason; the next end is recorded again", async () => {
        const clock = manualClock(T0);
        const store = await backend.open({ clock });
        await store.createSession({ id: "s1", source: "cli" });
        await store.endSession("s1", "compression");
        await store.reopenSession("s1");
        expect(await row(store, "s1")).toMatchObject({ ended_at: null, end_reason: null });
        clock.set(T0 + 2000);
        await store.endSession("s1", "user_exit");
        const s = await row(store, "s1");
        expect(s.end_reason).toBe("user_exit");
        expect(s.ended_at).toBeGreaterThanOrEqual(T0 + 2000);
      });

      it("reopening an unknown or still-open session is a no-op", async () => {
        const store = await backend.open();
        await store.createSession({ id: "s1", source: "cli" });
        await store.reopenSession("s1");
        await store.reopenSession("ghost");
        expect(await row(store, "s1")).toMatchObject({ ended_at: null, end_reason: null });
        expect(await store.sessionCount()).toBe(1);
      });

      it("empty ids and reasons are INVALID_ARGUMENT", async () => {
        const store = await backend.open();
        await store.createSession({ id: "s1", source: "cli" });
        expect((await rejection(store.endSession("", "x"))).code).toBe("INVALID_ARGUMENT");
        expect((await rejection(store.endSession("s1", ""))).code).toBe("INVALID_ARGUMENT");
        expect((await rejection(store.reopenSession(""))).code).toBe("INVALID_ARGUMENT");
        expect((await row(store, "s1")).ended_at).toBeNull();
      });
    });

    describe("updateSystemPrompt", () => {
      it("replaces the snapshot; unknown ids are a no-op", async () => {
        const store = await backend.open();
        await store.createSession({ id: "s1", source: "cli", systemPrompt: "old" });
        await store.updateSystemPrompt("s1", "new prompt");
        expect((await row(store, "s1")).system_prompt).toBe("new prompt");
        await store.updateSystemPrompt("ghost", "x");
        expect(await store.getSession("ghost")).toBeNull();
        expect((await rejection(store.updateSystemPrompt("", "x"))).code).toBe("INVALID_ARGUMENT");
      });
    });

    describe("updateTokenCounts", () => {
      it("incremental (default): the five token columns and api_call_count add up", async () => {
        const store = await backend.open();
        await store.createSession({ id: "s1", source: "cli" });
        await store.updateTokenCounts("s1", {
          inputTokens: 100,
          outputTokens: 20,
          cacheReadTokens: 5,
          cacheWriteTokens: 3,
          reasoningTokens: 7,
          apiCallCount: 1,
        });
        await store.updateTokenCounts("s1", {
          inputTokens: 50,
          outputTokens: 10,
          cacheReadTokens: 1,
          cacheWriteTokens: 2,
          reasoningTokens: 3,
          apiCallCount: 2,
        });
        expect(await row(store, "s1")).toMatchObject({
          input_tokens: 150,
          output_tokens: 30,
          cache_read_tokens: 6,
          cache_write_tokens: 5,
          reasoning_tokens: 10,
          api_call_count: 3,
        });
      });

      it("incremental: estimated cost becomes 0 (not NULL) after the first call, then sums", async () => {
        const store = await backend.open();
        await store.createSession({ id: "s1", source: "cli" });
        expect((await row(store, "s1")).estimated_cost_usd).toBeNull();
        await store.updateTokenCounts("s1", { inputTokens: 1 });
        expect((await row(store, "s1")).estimated_cost_usd).toBe(0);
        await store.updateTokenCounts("s1", { estimatedCostUsd: 0.25 });
        await store.updateTokenCounts("s1", { estimatedCostUsd: 0.5 });
        await store.updateTokenCounts("s1", { estimatedCostUsd: null });
        expect((await row(store, "s1")).estimated_cost_usd).toBeCloseTo(0.75, 12);
      });

      it("incremental: actual cost stays NULL until given, then sums; a NULL argument keeps it", async () => {
        const store = await backend.open();
        await store.createSession({ id: "s1", source: "cli" });
        await store.updateTokenCounts("s1", { inputTokens: 1 });
        expect((await row(store, "s1")).actual_cost_usd).toBeNull();
        await store.updateTokenCounts("s1", { actualCostUsd: 0.1 });
        await store.updateTokenCounts("s1", { actualCostUsd: 0.2 });
        await store.updateTokenCounts("s1", { actualCostUsd: null, inputTokens: 1 });
        expect((await row(store, "s1")).actual_cost_usd).toBeCloseTo(0.3, 12);
        // Zero is a value, not "absent".
        await store.updateTokenCounts("s1", { actualCostUsd: 0 });
        expect((await row(store, "s1")).actual_cost_usd).toBeCloseTo(0.3, 12);
      });

      it("absolute: tokens and api_call_count are set, estimated cost is set (absent → 0)", async () => {
        const store = await backend.open();
        await store.createSession({ id: "s1", source: "cli" });
        await store.updateTokenCounts("s1", {
          inputTokens: 999,
          outputTokens: 999,
          cacheReadTokens: 9,
          cacheWriteTokens: 9,
          reasoningTokens: 9,
          apiCallCount: 9,
          estimatedCostUsd: 9,
        });
        await store.updateTokenCounts("s1", {
          absolute: true,
          inputTokens: 10,
          outputTokens: 4,
          cacheReadTokens: 3,
          cacheWriteTokens: 2,
          reasoningTokens: 1,
          apiCallCount: 5,
          estimatedCostUsd: 1.5,
        });
        expect(await row(store, "s1")).toMatchObject({
          input_tokens: 10,
          output_tokens: 4,
          cache_read_tokens: 3,
          cache_write_tokens: 2,
          reasoning_tokens: 1,
          api_call_count: 5,
          estimated_cost_usd: 1.5,
        });
        // Absent values are the reference's defaults: 0 tokens, 0 calls, cost 0.
        await store.updateTokenCounts("s1", { absolute: true, inputTokens: 7 });
        expect(await row(store, "s1")).toMatchObject({
          input_tokens: 7,
          output_tokens: 0,
          reasoning_tokens: 0,
          api_call_count: 0,
          estimated_cost_usd: 0,
        });
      });

      it("absolute: actual cost is set when given and kept when NULL", async () => {
        const store = await backend.open();
        await store.createSession({ id: "s1", source: "cli" });
        await store.updateTokenCounts("s1", { absolute: true, actualCostUsd: null });
        expect((await row(store, "s1")).actual_cost_usd).toBeNull();
        await store.updateTokenCounts("s1", { actualCostUsd: 2 });
        await store.updateTokenCounts("s1", { absolute: true, actualCostUsd: 0.4 });
        expect((await row(store, "s1")).actual_cost_usd).toBeCloseTo(0.4, 12);
        await store.updateTokenCounts("s1", { absolute: true });
        expect((await row(store, "s1")).actual_cost_usd).toBeCloseTo(0.4, 12);
      });

      it.each([false, true])(
        "status columns: a new value wins, NULL keeps the old one (absolute: %s)",
        async (absolute) => {
          const store = await backend.open();
          await store.createSession({ id: "s1", source: "cli" });
          await store.updateTokenCounts("s1", {
            absolute,
            costStatus: "estimated",
            costSource: "table",
            pricingVersion: "v1",
          });
          await store.updateTokenCounts("s1", { absolute });
          expect(await row(store, "s1")).toMatchObject({
            cost_status: "estimated",
            cost_source: "table",
            pricing_version: "v1",
          });
          await store.updateTokenCounts("s1", {
            absolute,
            costStatus: "actual",
            costSource: "provider",
            pricingVersion: "v2",
          });
          expect(await row(store, "s1")).toMatchObject({
            cost_status: "actual",
            cost_source: "provider",
            pricing_version: "v2",
          });
        },
      );

      it.each([false, true])(
        "billing columns and model are backfilled only (absolute: %s)",
        async (absolute) => {
          const store = await backend.open();
          await store.createSession({ id: "s1", source: "cli" });
          await store.createSession({ id: "s2", source: "cli", model: "from-create" });
          for (const id of ["s1", "s2"]) {
            await store.updateTokenCounts(id, {
              absolute,
              model: "first",
              billingProvider: "openrouter",
              billingBaseUrl: "https://a.example",
              billingMode: "api",
            });
            await store.updateTokenCounts(id, {
              absolute,
              model: "second",
              billingProvider: "anthropic",
              billingBaseUrl: "https://b.example",
              billingMode: "subscription",
            });
          }
          const expected = {
            billing_provider: "openrouter",
            billing_base_url: "https://a.example",
            billing_mode: "api",
          };
          expect(await row(store, "s1")).toMatchObject({ ...expected, model: "first" });
          expect(await row(store, "s2")).toMatchObject({ ...expected, model: "from-create" });
        },
      );

      it("negative deltas are applied as given (the reference does not clamp)", async () => {
        const store = await backend.open();
        await store.createSession({ id: "s1", source: "cli" });
        await store.updateTokenCounts("s1", { inputTokens: 10 });
        await store.updateTokenCounts("s1", { inputTokens: -4 });
        expect((await row(store, "s1")).input_tokens).toBe(6);
      });

      it.each([false, true])("a missing session is not created (absolute: %s)", async (absolute) => {
        const store = await backend.open();
        await store.updateTokenCounts("ghost", { absolute, inputTokens: 5, model: "m" });
        expect(await store.getSession("ghost")).toBeNull();
        expect(await store.sessionCount()).toBe(0);
      });

      it.each([
        ["a fractional token count", { inputTokens: 1.5 }],
        ["a string token count", { outputTokens: "5" }],
        ["a NaN cost", { estimatedCostUsd: Number.NaN }],
        ["an infinite cost", { actualCostUsd: Number.POSITIVE_INFINITY }],
        ["a non-boolean absolute", { absolute: "yes" }],
        ["a non-string model", { model: 1 }],
      ])("%s is INVALID_ARGUMENT and changes nothing", async (_label, input) => {
        const store = await backend.open();
        await store.createSession({ id: "s1", source: "cli" });
        const before = await row(store, "s1");
        const error = await rejection(store.updateTokenCounts("s1", input as never));
        expect(error.code).toBe("INVALID_ARGUMENT");
        expect(await row(store, "s1")).toEqual(before);
      });
    });

    describe("getSession", () => {
      it("null for an unknown id; INVALID_ARGUMENT for an empty one", async () => {
        const store = await backend.open();
        expect(await store.getSession("nope")).toBeNull();
        expect((await rejection(store.getSession(""))).code).toBe("INVALID_ARGUMENT");
      });
    });

    describe("resolveSessionId", () => {
      async function withSessions(ids: string[]) {
        const clock = manualClock(T0);
        const store = await backend.open({ clock });
        for (const id of ids) {
          clock.advance(10);
          await store.createSession({ id, source: "cli" });
        }
        return store;
      }

      it("an exact id wins even when it is also a prefix of others", async () => {
        const store = await withSessions(["abc", "abcd", "abce"]);
        expect(await store.resolveSessionId("abc")).toBe("abc");
      });

      it("a unique prefix resolves; an ambiguous or unmatched one is null", async () => {
        const store = await withSessions(["20260101_aaa", "20260101_abb", "20260202_ccc"]);
        expect(await store.resolveSessionId("20260202")).toBe("20260202_ccc");
        expect(await store.resolveSessionId("20260101_ab")).toBe("20260101_abb");
        expect(await store.resolveSessionId("20260101")).toBeNull();
        expect(await store.resolveSessionId("2026")).toBeNull();
        expect(await store.resolveSessionId("zzz")).toBeNull();
      });

      it("'%' in the input is literal, not a wildcard", async () => {
        const store = await withSessions(["a%b1", "axb2"]);
        expect(await store.resolveSessionId("a%")).toBe("a%b1");
        expect(await store.resolveSessionId("%")).toBeNull();
      });

      it("'_' in the input is literal, not a wildcard", async () => {
        const store = await withSessions(["a_1", "ab2"]);
        expect(await store.resolveSessionId("a_")).toBe("a_1");
        expect(await store.resolveSessionId("_")).toBeNull();
      });

      it("'\\' in the input is literal, not an escape", async () => {
        const store = await withSessions(["x\\1", "x%2", "xy3"]);
        expect(await store.resolveSessionId("x\\")).toBe("x\\1");
        expect(await store.resolveSessionId("x\\%")).toBeNull();
      });

      it("prefixes match ASCII letters case-insensitively (SQLite LIKE), exact ids do not", async () => {
        const store = await withSessions(["abc-123", "zzz"]);
        expect(await store.resolveSessionId("ABC")).toBe("abc-123");
        expect(await store.resolveSessionId("ABC-123")).toBe("abc-123");
      });

      it("INVALID_ARGUMENT for an empty or non-string input", async () => {
        const store = await backend.open();
        expect((await rejection(store.resolveSessionId(""))).code).toBe("INVALID_ARGUMENT");
        expect((await rejection(store.resolveSessionId(undefined as never))).code).toBe("INVALID_ARGUMENT");
      });
    });

    describe("sessionCount and messageCount", () => {
      it("count sessions (optionally of one source) and message rows (optionally of one session)", async () => {
        const store = await backend.open();
        await store.createSession({ id: "c1", source: "cli" });
        await store.createSession({ id: "c2", source: "cli" });
        await store.createSession({ id: "t1", source: "telegram" });
        await store.appendMessage({ sessionId: "c1", role: "user", content: "a" });
        await store.appendMessage({ sessionId: "c1", role: "assistant", content: "b" });
        await store.appendMessage({ sessionId: "t1", role: "user", content: "c" });

        expect(await store.sessionCount()).toBe(3);
        expect(await store.sessionCount({ source: "cli" })).toBe(2);
        expect(await store.sessionCount({ source: "telegram" })).toBe(1);
        expect(await store.sessionCount({ source: "discord" })).toBe(0);

        expect(await store.messageCount()).toBe(3);
        expect(await store.messageCount({ sessionId: "c1" })).toBe(2);
        expect(await store.messageCount({ sessionId: "c2" })).toBe(0);
        expect(await store.messageCount({ sessionId: "ghost" })).toBe(0);
      });

      it("falsy filters mean all", async () => {
        const store = await backend.open();
        await store.createSession({ id: "c1", source: "cli" });
        await store.createSession({ id: "t1", source: "telegram" });
        await store.appendMessage({ sessionId: "c1", role: "user", content: "a" });
        await store.appendMessage({ sessionId: "t1", role: "user", content: "b" });
        expect(await store.sessionCount({ source: "" })).toBe(2);
        expect(await store.sessionCount({})).toBe(2);
        expect(await store.sessionCount({ source: undefined })).toBe(2);
        expect(await store.messageCount({ sessionId: "" })).toBe(2);
        expect(await store.messageCount({})).toBe(2);
      });

      it("messageCount counts rows, which clearMessages removes", async () => {
        const store = await backend.open();
        await store.createSession({ id: "c1", source: "cli" });
        await store.appendMessage({ sessionId: "c1", role: "user", content: "a" });
        await store.clearMessages("c1");
        expect(await store.messageCount({ sessionId: "c1" })).toBe(0);
      });

      it("INVALID_ARGUMENT for non-string filters", async () => {
        const store = await backend.open();
        expect((await rejection(store.sessionCount({ source: 1 as never }))).code).toBe("INVALID_ARGUMENT");
        expect((await rejection(store.messageCount({ sessionId: 1 as never }))).code).toBe(
          "INVALID_ARGUMENT",
        );
      });
    });
  });
};
