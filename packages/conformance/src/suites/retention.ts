import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionStore } from "@hermes/core";
import { afterEach, describe, expect, it } from "vitest";
import { type ContractSuite, type ManualClock, manualClock, rejection } from "../harness.js";

const DAY = 86_400;
const T0 = 1_767_225_600;

// A sessions directory of transcript files, outside the store (a server backend has no file).
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function sessionsDir(files: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-sessions-"));
  dirs.push(dir);
  for (const f of files) writeFileSync(join(dir, f), "{}");
  return dir;
}

/** Creates a session at the clock's current time, with one message; ends it if `endReason`. */
async function seed(
  store: SessionStore,
  id: string,
  o: { source?: string; parent?: string; end?: string } = {},
) {
  await store.createSession({
    id,
    source: o.source ?? "cli",
    ...(o.parent === undefined ? {} : { parentSessionId: o.parent }),
  });
  await store.appendMessage({ sessionId: id, role: "user", content: `hello from ${id}` });
  if (o.end !== undefined) await store.endSession(id, o.end);
}

/** exportSession, exportAll, deleteSession, pruneSessions, meta, vacuum, auto-prune (SPEC §5). */
export const retentionSuite: ContractSuite = (backend) => {
  describe(`export [${backend.name}]`, () => {
    it("exportSession is the session row plus its messages, null when unknown", async () => {
      const store = await backend.open({ clock: manualClock() });
      await seed(store, "s1");
      await store.appendMessage({ sessionId: "s1", role: "assistant", toolCalls: [{ id: "c" }] });
      const exported = await store.exportSession("s1");
      expect(exported).toEqual({
        ...(await store.getSession("s1")),
        messages: await store.getMessages("s1"),
      });
      expect(exported?.messages.length).toBe(2);
      expect(exported?.messages[1]?.tool_calls).toEqual([{ id: "c" }]);
      expect(await store.exportSession("ghost")).toBeNull();
      expect((await rejection(store.exportSession(""))).code).toBe("INVALID_ARGUMENT");
    });

    it("exportAll lists sessions by last activity with last_active and messages", async () => {
      const clock = manualClock(T0);
      const store = await backend.open({ clock });
      await seed(store, "old", { source: "cli" });
      clock.advance(100);
      await seed(store, "mid", { source: "telegram" });
      clock.advance(100);
      await store.createSession({ id: "empty", source: "cli" });
      clock.advance(100);
      // A new message makes "old" the most recently active.
      await store.appendMessage({ sessionId: "old", role: "assistant", content: "later" });

      const all = await store.exportAll();
      expect(all.map((s) => s.id)).toEqual(["old", "empty", "mid"]);
      const old = all[0];
      const oldMessages = await store.getMessages("old");
      expect(old?.last_active).toBe(oldMessages[1]?.timestamp);
      expect(old?.messages).toEqual(oldMessages);
      // Without messages, last_active is the start.
      const empty = all[1];
      expect(empty?.last_active).toBe(empty?.started_at);
      expect(empty?.messages).toEqual([]);
      expect(all[2]).toMatchObject({ id: "mid", source: "telegram", message_count: 1 });
      expect(all[2]?.messages.map((m) => m.content)).toEqual(["hello from mid"]);

      expect((await store.exportAll({ source: "cli" })).map((s) => s.id)).toEqual(["old", "empty"]);
      expect(await store.exportAll({ source: "nowhere" })).toEqual([]);
      // A falsy source means every source, as the reference.
      expect((await store.exportAll({ source: "" })).length).toBe(3);
    });

    it("exportAll rows are searchSessions rows (limit 100000) plus messages", async () => {
      const clock = manualClock(T0);
      const store = await backend.open({ clock });
      for (const id of ["a", "b", "c", "d"]) {
        await seed(store, id, { source: id === "b" ? "telegram" : "cli" });
        clock.advance(10);
      }
      await store.appendMessage({ sessionId: "b", role: "assistant", content: "bump" });
      for (const source of [undefined, "cli", "telegram"]) {
        const o = source === undefined ? {} : { source };
        const exported = (await store.exportAll(o)).map(({ messages: _m, ...row }) => row);
        expect(exported).toEqual(await store.searchSessions({ ...o, limit: 100_000 }));
      }
    });

    it("exportAll breaks last_active ties by started_at, then id, descending", async () => {
      const store = await backend.open({ clock: () => T0 });
      for (const id of ["a", "c", "b"]) await store.createSession({ id, source: "cli" });
      expect((await store.exportAll()).map((s) => s.id)).toEqual(["c", "b", "a"]);
    });
  });

  describe(`deleteSession [${backend.name}]`, () => {
    it("deletes the session and its messages, orphans children, keeps grandchildren linked", async () => {
      const store = await backend.open({ clock: manualClock() });
      await seed(store, "parent");
      await seed(store, "child", { parent: "parent" });
      await seed(store, "grandchild", { parent: "child" });
      await seed(store, "other");
      expect(await store.deleteSession("parent")).toBe(true);
      expect(await store.getSession("parent")).toBeNull();
      expect(await store.getMessages("parent")).toEqual([]);
      expect(await store.getSession("child")).toMatchObject({ parent_session_id: null, message_count: 1 });
      expect(await store.getSession("grandchild")).toMatchObject({ parent_session_id: "child" });
      expect(await store.messageCount()).toBe(3);
      expect(await store.sessionCount()).toBe(3);
      expect(await store.deleteSession("parent")).toBe(false);
    });

    it("returns false for an unknown session and changes nothing", async () => {
      const store = await backend.open({ clock: manualClock() });
      await seed(store, "s1");
      const dir = sessionsDir(["ghost.json"]);
      expect(await store.deleteSession("ghost", { sessionsDir: dir })).toBe(false);
      expect(await store.sessionCount()).toBe(1);
      // Files are only cleaned for a session that was deleted.
      expect(existsSync(join(dir, "ghost.json"))).toBe(true);
    });

    it("removes the session's transcript files from sessionsDir, and only those", async () => {
      const store = await backend.open({ clock: manualClock() });
      await seed(store, "s1");
      await seed(store, "s*");
      const dir = sessionsDir([
        "s1.json",
        "s1.jsonl",
        "request_dump_s1_001.json",
        "request_dump_s1_002.json",
        "request_dump_s1_003.txt",
        "s1.json.bak",
        "s10.json",
        "request_dump_s10_001.json",
        "s*.json",
        "request_dump_s*_1.json",
      ]);
      mkdirSync(join(dir, "request_dump_s1_dir.json"));
      expect(await store.deleteSession("s1", { sessionsDir: dir })).toBe(true);
      expect(readdirSync(dir).sort()).toEqual(
        [
          "request_dump_s10_001.json",
          "request_dump_s1_003.txt",
          "request_dump_s1_dir.json", // a directory is not unlinked; the error is ignored
          "request_dump_s*_1.json",
          "s*.json",
          "s1.json.bak",
          "s10.json",
        ].sort(),
      );
      // Ids are matched literally, not as glob patterns.
      expect(await store.deleteSession("s*", { sessionsDir: dir })).toBe(true);
      expect(readdirSync(dir).sort()).toEqual(
        [
          "request_dump_s10_001.json",
          "request_dump_s1_003.txt",
          "request_dump_s1_dir.json",
          "s1.json.bak",
          "s10.json",
        ].sort(),
      );
    });

    it("never removes files outside sessionsDir, and ignores a missing directory", async () => {
      const store = await backend.open({ clock: manualClock() });
      await seed(store, "../escape");
      await seed(store, "s2");
      const outer = sessionsDir(["escape.json"]);
      const inner = join(outer, "sessions");
      mkdirSync(inner);
      expect(await store.deleteSession("../escape", { sessionsDir: inner })).toBe(true);
      expect(existsSync(join(outer, "escape.json"))).toBe(true);
      expect(await store.deleteSession("s2", { sessionsDir: join(outer, "missing") })).toBe(true);
      expect(await store.sessionCount()).toBe(0);
    });

    it("validates its arguments", async () => {
      const store = await backend.open({ clock: manualClock() });
      await seed(store, "s1");
      expect((await rejection(store.deleteSession(""))).code).toBe("INVALID_ARGUMENT");
      expect((await rejection(store.deleteSession("s1", { sessionsDir: "" }))).code).toBe("INVALID_ARGUMENT");
      expect((await rejection(store.deleteSession("s1", { sessionsDir: 5 as never }))).code).toBe(
        "INVALID_ARGUMENT",
      );
      expect(await store.sessionCount()).toBe(1);
    });
  });

  describe(`pruneSessions [${backend.name}]`, () => {
    /** Sessions of every age and state; the clock ends at T0 + 100 days. */
    async function population(clock: ManualClock, store: SessionStore) {
      clock.set(T0);
      await seed(store, "old-ended", { end: "user_exit" });
      await seed(store, "old-active");
      await seed(store, "old-ended-telegram", { source: "telegram", end: "user_exit" });
      await seed(store, "old-ended-late"); // ends 95 days later: age counts from the start
      await seed(store, "child-of-old", { parent: "old-ended" }); // active: kept, orphaned
      await seed(store, "old-child-of-old", { parent: "old-ended", end: "compression" }); // pruned too
      clock.advance(95 * DAY);
      await store.endSession("old-ended-late", "user_exit");
      clock.advance(-5 * DAY);
      await seed(store, "recent-ended", { end: "user_exit" }); // started 10 days ago
      await seed(store, "child-of-recent", { parent: "recent-ended" });
      clock.set(T0 + 100 * DAY);
    }

    it("prunes ended sessions that started before the cutoff, never active ones", async () => {
      const clock = manualClock(T0);
      const store = await backend.open({ clock });
      await population(clock, store);
      expect(await store.pruneSessions()).toBe(4);
      const left = (await store.exportAll()).map((s) => s.id).sort();
      expect(left).toEqual(["child-of-old", "child-of-recent", "old-active", "recent-ended"]);
      expect(await store.getSession("child-of-old")).toMatchObject({ parent_session_id: null });
      expect(await store.getSession("child-of-recent")).toMatchObject({ parent_session_id: "recent-ended" });
      expect(await store.messageCount()).toBe(4);
      for (const id of ["old-ended", "old-ended-late", "old-child-of-old"]) {
        expect(await store.getMessages(id)).toEqual([]);
      }
      // Nothing left to prune.
      expect(await store.pruneSessions()).toBe(0);
    });

    it("filters by source and honours olderThanDays", async () => {
      const clock = manualClock(T0);
      const store = await backend.open({ clock });
      await population(clock, store);
      expect(await store.pruneSessions({ source: "telegram" })).toBe(1);
      expect(await store.getSession("old-ended-telegram")).toBeNull();
      expect(await store.getSession("old-ended")).not.toBeNull();
      // 101 days: nothing started that long ago.
      expect(await store.pruneSessions({ olderThanDays: 101 })).toBe(0);
      // 5 days: the recent ended session goes too; still no active one.
      expect(await store.pruneSessions({ olderThanDays: 5 })).toBe(4);
      expect((await store.exportAll()).map((s) => s.id).sort()).toEqual([
        "child-of-old",
        "child-of-recent",
        "old-active",
      ]);
      expect(await store.getSession("child-of-recent")).toMatchObject({ parent_session_id: null });
    });

    it("with olderThanDays 0 prunes every ended session started before now", async () => {
      const clock = manualClock(T0);
      const store = await backend.open({ clock });
      await seed(store, "a", { end: "x" });
      await seed(store, "b");
      clock.advance(1);
      expect(await store.pruneSessions({ olderThanDays: 0 })).toBe(1);
      expect((await store.exportAll()).map((s) => s.id)).toEqual(["b"]);
    });

    it("removes the pruned sessions' files from sessionsDir", async () => {
      const clock = manualClock(T0);
      const store = await backend.open({ clock });
      await population(clock, store);
      const dir = sessionsDir([
        "old-ended.json",
        "old-ended.jsonl",
        "request_dump_old-ended_1.json",
        "old-ended-late.jsonl",
        "old-active.json",
        "recent-ended.json",
      ]);
      expect(await store.pruneSessions({ sessionsDir: dir })).toBe(4);
      expect(readdirSync(dir).sort()).toEqual(["old-active.json", "recent-ended.json"]);
    });

    it("validates its arguments and prunes nothing on bad input", async () => {
      const clock = manualClock(T0);
      const store = await backend.open({ clock });
      await population(clock, store);
      for (const o of [
        { olderThanDays: -1 },
        { olderThanDays: Number.NaN },
        { olderThanDays: "90" },
        { source: 3 },
      ]) {
        expect((await rejection(store.pruneSessions(o as never))).code).toBe("INVALID_ARGUMENT");
      }
      expect(await store.sessionCount()).toBe(8);
    });
  });

  describe(`meta, vacuum [${backend.name}]`, () => {
    it("getMeta/setMeta read and upsert state_meta", async () => {
      const store = await backend.open({ clock: manualClock() });
      expect(await store.getMeta("k")).toBeNull();
      await store.setMeta("k", "v1");
      await store.setMeta("k", "v2");
      await store.setMeta("other", "");
      expect(await store.getMeta("k")).toBe("v2");
      expect(await store.getMeta("other")).toBe("");
      expect((await rejection(store.setMeta("", "v"))).code).toBe("INVALID_ARGUMENT");
      expect((await rejection(store.setMeta("k", 5 as never))).code).toBe("INVALID_ARGUMENT");
      expect(await store.getMeta("k")).toBe("v2");
    });

    it("vacuum keeps every row and lets writes continue", async () => {
      const store = await backend.open({ clock: manualClock() });
      await seed(store, "a");
      await seed(store, "b");
      await store.deleteSession("a");
      // Writes queued around a vacuum all land.
      const pending = [
        store.appendMessage({ sessionId: "b", role: "user", content: "before" }),
        store.vacuum(),
        store.appendMessage({ sessionId: "b", role: "user", content: "after" }),
      ];
      await Promise.all(pending);
      expect((await store.getMessages("b")).map((m) => m.content)).toEqual([
        "hello from b",
        "before",
        "after",
      ]);
      await store.vacuum();
      expect(await store.sessionCount()).toBe(1);
    });
  });

  describe(`maybeAutoPruneAndVacuum [${backend.name}]`, () => {
    it("runs, records last_auto_prune, then skips within the interval", async () => {
      const clock = manualClock(T0);
      const store = await backend.open({ clock });
      await seed(store, "old", { end: "x" });
      clock.advance(91 * DAY);
      const first = await store.maybeAutoPruneAndVacuum();
      expect(first).toStrictEqual({ skipped: false, pruned: 1, vacuumed: true });
      const recorded = Number(await store.getMeta("last_auto_prune"));
      expect(recorded).toBeGreaterThan(T0 + 91 * DAY);
      expect(recorded).toBeLessThan(T0 + 91 * DAY + 1);

      clock.advance(23 * 3600);
      await seed(store, "old2", { end: "x" });
      clock.advance(0.5 * 3600);
      expect(await store.maybeAutoPruneAndVacuum({ retentionDays: 0 })).toStrictEqual({
        skipped: true,
        pruned: 0,
        vacuumed: false,
      });
      expect(Number(await store.getMeta("last_auto_prune"))).toBe(recorded);
      expect(await store.getSession("old2")).not.toBeNull();

      clock.advance(3600);
      // Past 24 hours: runs again; pruning nothing still records the run, and VACUUM is skipped.
      expect(await store.maybeAutoPruneAndVacuum()).toStrictEqual({
        skipped: false,
        pruned: 0,
        vacuumed: false,
      });
      expect(Number(await store.getMeta("last_auto_prune"))).toBeGreaterThan(recorded + 24 * 3600);
    });

    it("honours minIntervalHours, retentionDays and vacuum: false", async () => {
      const clock = manualClock(T0);
      const store = await backend.open({ clock });
      await seed(store, "a", { end: "x" });
      clock.advance(2 * DAY);
      expect(await store.maybeAutoPruneAndVacuum({ retentionDays: 1, vacuum: false })).toStrictEqual({
        skipped: false,
        pruned: 1,
        vacuumed: false,
      });
      await seed(store, "b", { end: "x" });
      clock.advance(2 * 3600);
      expect((await store.maybeAutoPruneAndVacuum({ retentionDays: 0 })).skipped).toBe(true);
      expect(await store.maybeAutoPruneAndVacuum({ retentionDays: 0, minIntervalHours: 1 })).toStrictEqual({
        skipped: false,
        pruned: 1,
        vacuumed: true,
      });
    });

    it.each([
      ["garbage", false],
      ["", false],
      ["nan", false],
      ["1.7e9x", false],
      // Python's float() syntax: surrounding whitespace, underscores, exponent, infinity.
      [` ${T0 + 100 * DAY - 60}\n`, true],
      [`${T0 + 100 * DAY - 60}.0`, true],
      ["1_775_865_540e0", true], // T0 + 100 days - 60 s, with underscores
      ["1__775865540", false], // a doubled underscore is a ValueError in Python
      ["inf", true],
    ])("reads last_auto_prune %j as Python's float() would (skipped: %s)", async (stored, skipped) => {
      const clock = manualClock(T0 + 100 * DAY);
      const store = await backend.open({ clock });
      await store.setMeta("last_auto_prune", stored);
      const result = await store.maybeAutoPruneAndVacuum();
      expect(result.skipped).toBe(skipped);
      expect(result.error).toBeUndefined();
      if (skipped) {
        expect(await store.getMeta("last_auto_prune")).toBe(stored);
      } else {
        // An unparsable value counts as no previous run, and is replaced.
        expect(Number(await store.getMeta("last_auto_prune"))).toBeGreaterThan(T0 + 100 * DAY);
      }
    });

    it("writes the time as Python's str(float)", async () => {
      const store = await backend.open({ clock: () => T0 });
      await store.maybeAutoPruneAndVacuum();
      expect(await store.getMeta("last_auto_prune")).toBe(`${T0}.0`);
    });

    it("never throws: bad options come back as an error, with nothing recorded", async () => {
      const clock = manualClock(T0);
      const store = await backend.open({ clock });
      await seed(store, "a", { end: "x" });
      clock.advance(100 * DAY);
      for (const o of [
        { retentionDays: -1 },
        { minIntervalHours: "x" },
        { vacuum: "yes" },
        { sessionsDir: "" },
      ]) {
        const result = await store.maybeAutoPruneAndVacuum(o as never);
        expect(result).toMatchObject({ skipped: false, pruned: 0, vacuumed: false });
        expect(result.error).toEqual(expect.any(String));
      }
      expect(await store.getMeta("last_auto_prune")).toBeNull();
      expect(await store.sessionCount()).toBe(1);
    });

    it("removes pruned sessions' files when given sessionsDir", async () => {
      const clock = manualClock(T0);
      const store = await backend.open({ clock });
      await seed(store, "a", { end: "x" });
      clock.advance(100 * DAY);
      const dir = sessionsDir(["a.json", "a.jsonl", "b.json"]);
      expect((await store.maybeAutoPruneAndVacuum({ sessionsDir: dir })).pruned).toBe(1);
      expect(readdirSync(dir)).toEqual(["b.json"]);
    });
  });
};
