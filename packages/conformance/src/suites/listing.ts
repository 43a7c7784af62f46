import type { RichSessionRow, SessionStore } from "@hermes/core";
import { describe, expect, it } from "vitest";
import { type ContractSuite, type ManualClock, manualClock, rejection } from "../harness.js";

/** The error a promise rejects with (fails the test when it resolves). */
const T0 = 1_767_225_600;
const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id);

/**
 * A store whose clock the test places exactly: `at(t, fn)` runs `fn` with the clock at `T0 + t`
 * (each reading adds 1 ms, so two operations at the same `t` get the same timestamp).
 */
async function openAt(open: (o: { clock: () => number }) => Promise<SessionStore>) {
  const clock: ManualClock = manualClock(T0);
  const store = await open({ clock });
  const at = async <T>(t: number, fn: () => Promise<T>): Promise<T> => {
    clock.set(T0 + t);
    return fn();
  };
  return { store, clock, at };
}

/** searchSessions, listSessionsRich, getCompressionTip, resolveResumeSessionId (SPEC §5 "Sessions"). */
export const listingContract: ContractSuite = (backend) => {
  const open = (o: { clock: () => number }) => backend.open(o);

  describe(`listing [${backend.name}]`, () => {
    describe("searchSessions", () => {
      it("adds last_active: the newest message's timestamp, else started_at", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "quiet", source: "cli" }));
        await at(10, () => store.createSession({ id: "busy", source: "cli" }));
        await at(20, () => store.appendMessage({ sessionId: "busy", role: "user", content: "a" }));
        await at(30, () => store.appendMessage({ sessionId: "busy", role: "assistant", content: "b" }));
        const rows = await store.searchSessions();
        const busy = rows.find((r) => r.id === "busy");
        const quiet = rows.find((r) => r.id === "quiet");
        expect(busy?.last_active).toBe((await store.getMessages("busy"))[1]?.timestamp);
        expect(busy?.last_active).toBeGreaterThan(T0 + 30);
        expect(quiet?.last_active).toBe(quiet?.started_at);
        // Every session column is there too.
        expect(quiet).toEqual({ ...(await store.getSession("quiet")), last_active: quiet?.started_at });
      });

      it("orders by last_active DESC, then started_at DESC, then id DESC", async () => {
        const { store, at } = await openAt(open);
        // old: started first, but has the newest message.
        await at(0, () => store.createSession({ id: "old", source: "cli" }));
        // tie1/tie2: last message at the same instant, tie2 started later.
        await at(10, () => store.createSession({ id: "tie1", source: "cli" }));
        await at(20, () => store.createSession({ id: "tie2", source: "cli" }));
        await at(50, () => store.appendMessage({ sessionId: "tie1", role: "user", content: "x" }));
        await at(50, () => store.appendMessage({ sessionId: "tie2", role: "user", content: "y" }));
        // same-a/same-b: no messages, same start → id DESC.
        await at(40, () => store.createSession({ id: "same-a", source: "cli" }));
        await at(40, () => store.createSession({ id: "same-b", source: "cli" }));
        await at(100, () => store.appendMessage({ sessionId: "old", role: "user", content: "z" }));
        expect(ids(await store.searchSessions())).toEqual(["old", "tie2", "tie1", "same-b", "same-a"]);
      });

      it("filters by source; an empty source means all", async () => {
        const { store, at } = await openAt(open);
        await at(1, () => store.createSession({ id: "c1", source: "cli" }));
        await at(2, () => store.createSession({ id: "t1", source: "telegram" }));
        await at(3, () => store.createSession({ id: "c2", source: "cli" }));
        expect(ids(await store.searchSessions({ source: "cli" }))).toEqual(["c2", "c1"]);
        expect(ids(await store.searchSessions({ source: "discord" }))).toEqual([]);
        expect(ids(await store.searchSessions({ source: "" }))).toEqual(["c2", "t1", "c1"]);
      });

      it("filters by models, a start-time range and title (a part of it, any ASCII case, or an id prefix), with AND", async () => {
        const { store, at } = await openAt(open);
        await at(1, () => store.createSession({ id: "a1", source: "cli", model: "m-a" }));
        await at(2, () => store.createSession({ id: "b1", source: "telegram", model: "m-b" }));
        await at(3, () => store.createSession({ id: "a2", source: "cli", model: "m-a" }));
        await at(4, () => store.createSession({ id: "n1", source: "cli" }));
        await store.setSessionTitle("a1", "Fix Docker Build");
        await store.setSessionTitle("b1", "docker_compose 100%");
        expect(ids(await store.listSessionsRich({ models: ["m-a"] }))).toEqual(["a2", "a1"]);
        expect(ids(await store.listSessionsRich({ models: ["m-a", "m-b"] }))).toEqual(["a2", "b1", "a1"]);
        expect(ids(await store.listSessionsRich({ startedAfter: T0 + 2 }))).toEqual(["n1", "a2", "b1"]);
        expect(ids(await store.listSessionsRich({ startedBefore: T0 + 2 }))).toEqual(["a1"]);
        expect(ids(await store.listSessionsRich({ startedAfter: T0 + 2, startedBefore: T0 + 4 }))).toEqual([
          "a2",
          "b1",
        ]);
        expect(ids(await store.listSessionsRich({ title: "DOCKER" }))).toEqual(["b1", "a1"]);
        // LIKE's wildcards are matched as themselves.
        expect(ids(await store.listSessionsRich({ title: "r_c" }))).toEqual(["b1"]);
        expect(ids(await store.listSessionsRich({ title: "0%" }))).toEqual(["b1"]);
        expect(ids(await store.listSessionsRich({ title: "_" }))).toEqual(["b1"]);
        expect(ids(await store.listSessionsRich({ title: "a" }))).toEqual(["a2", "a1"]);
        expect(ids(await store.listSessionsRich({ title: "docker", models: ["m-a"] }))).toEqual(["a1"]);
        expect(ids(await store.listSessionsRich({ title: "docker", source: "telegram" }))).toEqual(["b1"]);
        // Empty filters mean none.
        expect(ids(await store.listSessionsRich({ models: [], title: "" }))).toHaveLength(4);
        expect((await rejection(store.listSessionsRich({ startedAfter: "x" as never }))).code).toBe(
          "INVALID_ARGUMENT",
        );
      });

      it("pages with limit (default 20) and offset", async () => {
        const { store, at } = await openAt(open);
        for (let i = 0; i < 25; i++) {
          await at(i, () => store.createSession({ id: `s${String(i).padStart(2, "0")}`, source: "cli" }));
        }
        expect(await store.searchSessions()).toHaveLength(20);
        expect(ids(await store.searchSessions({ limit: 3 }))).toEqual(["s24", "s23", "s22"]);
        expect(ids(await store.searchSessions({ limit: 3, offset: 3 }))).toEqual(["s21", "s20", "s19"]);
        expect(ids(await store.searchSessions({ offset: 23 }))).toEqual(["s01", "s00"]);
        expect(await store.searchSessions({ limit: 0 })).toEqual([]);
        expect(await store.searchSessions({ offset: 100 })).toEqual([]);
      });

      it.each([
        ["a negative limit", { limit: -1 }],
        ["a fractional limit", { limit: 2.5 }],
        ["a negative offset", { offset: -1 }],
        ["a string limit", { limit: "10" }],
        ["a non-string source", { source: 3 }],
      ])("%s is INVALID_ARGUMENT", async (_label, o) => {
        const store = await backend.open();
        expect((await rejection(store.searchSessions(o as never))).code).toBe("INVALID_ARGUMENT");
      });
    });

    describe("listSessionsRich: rows, order and last_active", () => {
      it("orders by started_at DESC (not by activity) and adds last_active", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "first", source: "cli" }));
        await at(10, () => store.createSession({ id: "second", source: "cli" }));
        await at(99, () => store.appendMessage({ sessionId: "first", role: "user", content: "late" }));
        const rows = await store.listSessionsRich();
        expect(ids(rows)).toEqual(["second", "first"]);
        expect(rows[1]?.last_active).toBeGreaterThan(T0 + 99);
        expect(rows[0]?.last_active).toBe(rows[0]?.started_at);
        expect(rows[0]).toEqual({
          ...(await store.getSession("second")),
          last_active: rows[0]?.started_at,
          preview: "",
        });
        expect("_lineage_root_id" in (rows[0] as object)).toBe(false);
        // The reference's key order: the session columns, then last_active, then preview.
        expect(Object.keys(rows[0] as object).slice(-3)).toEqual([
          "api_call_count",
          "last_active",
          "preview",
        ]);
      });

      it("filters by source and excludeSources; empty filters mean none", async () => {
        const { store, at } = await openAt(open);
        await at(1, () => store.createSession({ id: "c1", source: "cli" }));
        await at(2, () => store.createSession({ id: "t1", source: "telegram" }));
        await at(3, () => store.createSession({ id: "d1", source: "discord" }));
        await at(4, () => store.createSession({ id: "c2", source: "cli" }));
        expect(ids(await store.listSessionsRich({ source: "cli" }))).toEqual(["c2", "c1"]);
        expect(ids(await store.listSessionsRich({ excludeSources: ["telegram", "discord"] }))).toEqual([
          "c2",
          "c1",
        ]);
        expect(ids(await store.listSessionsRich({ excludeSources: ["cli"] }))).toEqual(["d1", "t1"]);
        expect(ids(await store.listSessionsRich({ source: "cli", excludeSources: ["cli"] }))).toEqual([]);
        expect(ids(await store.listSessionsRich({ source: "", excludeSources: [] }))).toEqual([
          "c2",
          "d1",
          "t1",
          "c1",
        ]);
        expect(ids(await store.listSessionsRich({ excludeSources: ["nope"] }))).toHaveLength(4);
      });

      it("pages with limit (default 20) and offset", async () => {
        const { store, at } = await openAt(open);
        for (let i = 0; i < 23; i++) {
          await at(i, () => store.createSession({ id: `s${String(i).padStart(2, "0")}`, source: "cli" }));
        }
        expect(await store.listSessionsRich()).toHaveLength(20);
        expect(ids(await store.listSessionsRich({ limit: 2, offset: 1 }))).toEqual(["s21", "s20"]);
        expect(await store.listSessionsRich({ limit: 0 })).toEqual([]);
      });

      it.each([
        ["a negative limit", { limit: -1 }],
        ["a negative offset", { offset: -5 }],
        ["a fractional offset", { offset: 0.5 }],
        ["a non-array excludeSources", { excludeSources: "cli" }],
        ["a non-string excluded source", { excludeSources: [1] }],
        ["a non-boolean includeChildren", { includeChildren: "yes" }],
        ["a non-boolean projectCompressionTips", { projectCompressionTips: 0 }],
      ])("%s is INVALID_ARGUMENT", async (_label, o) => {
        const store = await backend.open();
        expect((await rejection(store.listSessionsRich(o as never))).code).toBe("INVALID_ARGUMENT");
      });
    });

    describe("listSessionsRich: preview", () => {
      async function previewOf(messages: Array<{ role: string; content: string | null }>): Promise<string> {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "s", source: "cli" }));
        for (const m of messages) await at(1, () => store.appendMessage({ sessionId: "s", ...m }));
        const [row] = await store.listSessionsRich();
        return (row as RichSessionRow).preview;
      }

      const x = (n: number) => "x".repeat(n);

      it.each<[string, Array<{ role: string; content: string | null }>, string]>([
        ["no messages", [], ""],
        ["no user message", [{ role: "assistant", content: "hello" }], ""],
        [
          "the first user message with content (NULL content skipped)",
          [
            { role: "assistant", content: "greeting" },
            { role: "user", content: null },
            { role: "user", content: "first real" },
            { role: "user", content: "second" },
          ],
          "first real",
        ],
        [
          "same timestamp: the lower id is first",
          [
            { role: "user", content: "one" },
            { role: "user", content: "two" },
          ],
          "one",
        ],
        [
          "CR and LF become spaces (not collapsed)",
          [{ role: "user", content: "line1\r\nline2\nx" }],
          "line1  line2 x",
        ],
        ["trimmed", [{ role: "user", content: "  \t padded \r\n" }], "padded"],
        ["tabs inside are kept", [{ role: "user", content: "a\tb" }], "a\tb"],
        ["exactly 60 characters: no ellipsis", [{ role: "user", content: x(60) }], x(60)],
        ["61 characters: 60 + '...'", [{ role: "user", content: x(61) }], `${x(60)}...`],
        ["long: 60 + '...'", [{ role: "user", content: `${x(59)}yz${x(500)}` }], `${x(59)}y...`],
        [
          "cut at 63 before trimming: 60 + spaces + more text gives no ellipsis",
          [{ role: "user", content: `${x(60)}     tail` }],
          x(60),
        ],
        [
          "cut at 63 before trimming: leading spaces shorten the preview",
          [{ role: "user", content: `     ${x(70)}` }],
          x(58),
        ],
        [
          "61 to 63 characters after the cut keep the ellipsis",
          [{ role: "user", content: `${x(58)}   yy${x(10)}` }],
          `${x(58)}  ...`,
        ],
        [
          "an empty user message counts (and gives '')",
          [
            { role: "user", content: "" },
            { role: "user", content: "later" },
          ],
          "",
        ],
        ["counted in code points: 60 emoji", [{ role: "user", content: "😀".repeat(60) }], "😀".repeat(60)],
        [
          "counted in code points: 61 emoji",
          [{ role: "user", content: "😀".repeat(61) }],
          `${"😀".repeat(60)}...`,
        ],
        ["CJK", [{ role: "user", content: "记忆断裂问题复现了" }], "记忆断裂问题复现了"],
      ])("%s", async (_label, messages, expected) => {
        expect(await previewOf(messages)).toBe(expected);
      });

      it("follows (timestamp, id), not insertion alone", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "s", source: "cli" }));
        await at(20, () => store.appendMessage({ sessionId: "s", role: "user", content: "later" }));
        await at(10, () => store.appendMessage({ sessionId: "s", role: "user", content: "earlier" }));
        const [row] = await store.listSessionsRich();
        expect(row?.preview).toBe("earlier");
        expect(row?.last_active).toBeGreaterThan(T0 + 20);
      });
    });

    describe("listSessionsRich: children", () => {
      /**
       * root (live), its delegate child; br (ended 'branched'), its branch child started after
       * the end and an earlier child started before it; ux (ended 'user_exit') and its child.
       */
      async function family() {
        const { store, at, clock } = await openAt(open);
        await at(0, () => store.createSession({ id: "root", source: "cli" }));
        await at(5, () => store.createSession({ id: "delegate", source: "cli", parentSessionId: "root" }));
        await at(10, () => store.createSession({ id: "br", source: "cli" }));
        await at(12, () => store.createSession({ id: "br-early", source: "cli", parentSessionId: "br" }));
        await at(15, () => store.endSession("br", "branched"));
        await at(20, () => store.createSession({ id: "br-child", source: "cli", parentSessionId: "br" }));
        await at(30, () => store.createSession({ id: "ux", source: "cli" }));
        await at(35, () => store.endSession("ux", "user_exit"));
        await at(40, () => store.createSession({ id: "ux-child", source: "cli", parentSessionId: "ux" }));
        return { store, at, clock };
      }

      it("hides delegate children and other non-branch children; shows branch children", async () => {
        const { store } = await family();
        expect(ids(await store.listSessionsRich())).toEqual(["ux", "br-child", "br", "root"]);
      });

      it("a child started exactly when its parent ended 'branched' is a branch child", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "p", source: "cli" }));
        await at(5, () => store.endSession("p", "branched"));
        await at(5, () => store.createSession({ id: "c", source: "cli", parentSessionId: "p" }));
        const p = await store.getSession("p");
        const c = await store.getSession("c");
        expect(c?.started_at).toBe(p?.ended_at);
        expect(ids(await store.listSessionsRich())).toEqual(["c", "p"]);
      });

      it("includeChildren lists every session", async () => {
        const { store } = await family();
        expect(ids(await store.listSessionsRich({ includeChildren: true }))).toEqual([
          "ux-child",
          "ux",
          "br-child",
          "br-early",
          "br",
          "delegate",
          "root",
        ]);
      });
    });

    describe("listSessionsRich: compression tips", () => {
      /** root → c1 → c2 by compression, each continuation started after its parent ended. */
      async function chain() {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "other", source: "cli" }));
        await at(10, () =>
          store.createSession({
            id: "root",
            source: "cli",
            model: "m-root",
            systemPrompt: "p-root",
            userId: "u",
          }),
        );
        await at(11, () =>
          store.appendMessage({ sessionId: "root", role: "user", content: "root question" }),
        );
        await at(12, () => store.setSessionTitle("root", "Big task"));
        await at(13, () => store.updateTokenCounts("root", { inputTokens: 100 }));
        await at(20, () => store.endSession("root", "compression"));
        await at(21, () =>
          store.createSession({ id: "c1", source: "cli", model: "m-c1", parentSessionId: "root" }),
        );
        await at(22, () => store.appendMessage({ sessionId: "c1", role: "user", content: "c1 question" }));
        await at(30, () => store.endSession("c1", "compression"));
        await at(31, () =>
          store.createSession({
            id: "c2",
            source: "cli",
            model: "m-c2",
            systemPrompt: "p-c2",
            parentSessionId: "c1",
          }),
        );
        await at(32, () => store.appendMessage({ sessionId: "c2", role: "user", content: "c2 question" }));
        await at(33, () => store.appendMessage({ sessionId: "c2", role: "assistant", content: "answer" }));
        await at(34, () => store.setSessionTitle("c2", "Big task #2"));
        await at(50, () => store.createSession({ id: "newer", source: "cli" }));
        return store;
      }

      it("a compression root shows its tip's fields, keeps its start, gains _lineage_root_id", async () => {
        const store = await chain();
        const rows = await store.listSessionsRich();
        expect(ids(rows)).toEqual(["newer", "c2", "other"]);
        const root = await store.getSession("root");
        const tip = await store.getSession("c2");
        const [projected] = (await store.listSessionsRich({ includeChildren: true })).filter(
          (r) => r.id === "c2",
        );
        const row = rows[1] as RichSessionRow;
        expect(row).toEqual({
          ...root,
          id: "c2",
          ended_at: null,
          end_reason: null,
          message_count: 2,
          tool_call_count: 0,
          title: "Big task #2",
          last_active: projected?.last_active,
          preview: "c2 question",
          model: "m-c2",
          system_prompt: "p-c2",
          _lineage_root_id: "root",
        });
        // The root's own values where the tip's are not surfaced.
        expect(row.started_at).toBe(root?.started_at);
        expect(row.input_tokens).toBe(100);
        expect(row.user_id).toBe("u");
        expect(row.parent_session_id).toBeNull();
        expect(row.last_active).toBeGreaterThan(tip?.started_at ?? Number.POSITIVE_INFINITY);
        expect(Object.keys(row).slice(-3)).toEqual(["last_active", "preview", "_lineage_root_id"]);
      });

      it("projectCompressionTips: false gives the raw root row", async () => {
        const store = await chain();
        const rows = await store.listSessionsRich({ projectCompressionTips: false });
        expect(ids(rows)).toEqual(["newer", "root", "other"]);
        const root = rows[1] as RichSessionRow;
        expect(root).toMatchObject({
          end_reason: "compression",
          title: "Big task",
          preview: "root question",
        });
        expect("_lineage_root_id" in root).toBe(false);
      });

      it("includeChildren lists raw rows, without projection", async () => {
        const store = await chain();
        const rows = await store.listSessionsRich({ includeChildren: true });
        expect(ids(rows)).toEqual(["newer", "c2", "c1", "root", "other"]);
        expect(rows.some((r) => "_lineage_root_id" in r)).toBe(false);
      });

      it("a compression root whose only child started before the end is not projected", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "root", source: "cli" }));
        await at(5, () => store.createSession({ id: "sub", source: "cli", parentSessionId: "root" }));
        await at(10, () => store.endSession("root", "compression"));
        const [row] = await store.listSessionsRich();
        expect(row?.id).toBe("root");
        expect(row?.end_reason).toBe("compression");
        expect("_lineage_root_id" in (row as object)).toBe(false);
      });
    });

    describe("getCompressionTip", () => {
      it("follows continuations to the end of the chain, from any link", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "a", source: "cli" }));
        await at(1, () => store.endSession("a", "compression"));
        await at(2, () => store.createSession({ id: "b", source: "cli", parentSessionId: "a" }));
        await at(3, () => store.endSession("b", "compression"));
        await at(4, () => store.createSession({ id: "c", source: "cli", parentSessionId: "b" }));
        expect(await store.getCompressionTip("a")).toBe("c");
        expect(await store.getCompressionTip("b")).toBe("c");
        expect(await store.getCompressionTip("c")).toBe("c");
      });

      it("the input itself when there is no chain, or no such session", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "solo", source: "cli" }));
        expect(await store.getCompressionTip("solo")).toBe("solo");
        expect(await store.getCompressionTip("ghost")).toBe("ghost");
      });

      it("ignores children started before the end, and parents ended for another reason", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "a", source: "cli" }));
        await at(1, () => store.createSession({ id: "early", source: "cli", parentSessionId: "a" }));
        await at(2, () => store.endSession("a", "compression"));
        expect(await store.getCompressionTip("a")).toBe("a");
        await at(3, () => store.createSession({ id: "b", source: "cli" }));
        await at(4, () => store.endSession("b", "branched"));
        await at(5, () => store.createSession({ id: "b-child", source: "cli", parentSessionId: "b" }));
        expect(await store.getCompressionTip("b")).toBe("b");
        await at(6, () => store.createSession({ id: "live", source: "cli" }));
        await at(7, () => store.createSession({ id: "live-child", source: "cli", parentSessionId: "live" }));
        expect(await store.getCompressionTip("live")).toBe("live");
      });

      it("a continuation started exactly at the end counts; the newest continuation wins", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "a", source: "cli" }));
        await at(5, () => store.endSession("a", "compression"));
        await at(5, () => store.createSession({ id: "same-instant", source: "cli", parentSessionId: "a" }));
        expect(await store.getCompressionTip("a")).toBe("same-instant");
        await at(9, () => store.createSession({ id: "newest", source: "cli", parentSessionId: "a" }));
        expect(await store.getCompressionTip("a")).toBe("newest");
      });

      it("stops after 100 hops", async () => {
        const { store, at } = await openAt(open);
        const id = (i: number) => `n${String(i).padStart(3, "0")}`;
        for (let i = 0; i <= 102; i++) {
          await at(i * 2, () =>
            store.createSession({ id: id(i), source: "cli", parentSessionId: i === 0 ? null : id(i - 1) }),
          );
          await at(i * 2 + 1, () => store.endSession(id(i), "compression"));
        }
        expect(await store.getCompressionTip(id(0))).toBe(id(100));
        expect(await store.getCompressionTip(id(2))).toBe(id(102));
      });

      it("INVALID_ARGUMENT for an empty id", async () => {
        const store = await backend.open();
        expect((await rejection(store.getCompressionTip(""))).code).toBe("INVALID_ARGUMENT");
      });
    });

    describe("resolveResumeSessionId", () => {
      it("a session with messages resolves to itself, even when it has children", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "a", source: "cli" }));
        await at(1, () => store.appendMessage({ sessionId: "a", role: "user", content: "hi" }));
        await at(2, () => store.createSession({ id: "b", source: "cli", parentSessionId: "a" }));
        await at(3, () => store.appendMessage({ sessionId: "b", role: "user", content: "hi" }));
        expect(await store.resolveResumeSessionId("a")).toBe("a");
      });

      it("walks empty sessions down to the first descendant with messages", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "a", source: "cli" }));
        await at(1, () => store.createSession({ id: "b", source: "cli", parentSessionId: "a" }));
        await at(2, () => store.createSession({ id: "c", source: "cli", parentSessionId: "b" }));
        await at(3, () => store.appendMessage({ sessionId: "c", role: "user", content: "here" }));
        await at(4, () => store.createSession({ id: "d", source: "cli", parentSessionId: "c" }));
        await at(5, () => store.appendMessage({ sessionId: "d", role: "user", content: "deeper" }));
        expect(await store.resolveResumeSessionId("a")).toBe("c");
        expect(await store.resolveResumeSessionId("b")).toBe("c");
      });

      it("follows only the newest child (started_at DESC, then id DESC)", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "a", source: "cli" }));
        await at(1, () => store.createSession({ id: "older", source: "cli", parentSessionId: "a" }));
        await at(2, () => store.appendMessage({ sessionId: "older", role: "user", content: "x" }));
        await at(3, () => store.createSession({ id: "newer", source: "cli", parentSessionId: "a" }));
        // The newest child is empty and childless: no redirect, even though "older" has messages.
        expect(await store.resolveResumeSessionId("a")).toBe("a");

        await at(10, () => store.createSession({ id: "p", source: "cli" }));
        await at(11, () => store.createSession({ id: "k-b", source: "cli", parentSessionId: "p" }));
        await at(11, () => store.createSession({ id: "k-a", source: "cli", parentSessionId: "p" }));
        await at(12, () => store.appendMessage({ sessionId: "k-a", role: "user", content: "a" }));
        await at(12, () => store.appendMessage({ sessionId: "k-b", role: "user", content: "b" }));
        expect(await store.resolveResumeSessionId("p")).toBe("k-b");
      });

      it("the input when no descendant has messages, or for an unknown id", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "a", source: "cli" }));
        await at(1, () => store.createSession({ id: "b", source: "cli", parentSessionId: "a" }));
        expect(await store.resolveResumeSessionId("a")).toBe("a");
        expect(await store.resolveResumeSessionId("ghost")).toBe("ghost");
      });

      it("stops after 32 hops", async () => {
        const { store, at } = await openAt(open);
        const id = (i: number) => `d${String(i).padStart(2, "0")}`;
        for (let i = 0; i <= 33; i++) {
          await at(i, () =>
            store.createSession({ id: id(i), source: "cli", parentSessionId: i === 0 ? null : id(i - 1) }),
          );
        }
        await at(40, () => store.appendMessage({ sessionId: id(33), role: "user", content: "deep" }));
        // d33 is 33 hops below d00 (out of reach) and 32 below d01 (in reach).
        expect(await store.resolveResumeSessionId(id(0))).toBe(id(0));
        expect(await store.resolveResumeSessionId(id(1))).toBe(id(33));
      });

      it("a session that is its own parent does not loop", async () => {
        const { store, at } = await openAt(open);
        await at(0, () => store.createSession({ id: "self", source: "cli", parentSessionId: "self" }));
        expect(await store.resolveResumeSessionId("self")).toBe("self");
      });

      it("INVALID_ARGUMENT for an empty id", async () => {
        const store = await backend.open();
        expect((await rejection(store.resolveResumeSessionId(""))).code).toBe("INVALID_ARGUMENT");
      });
    });
  });
};
