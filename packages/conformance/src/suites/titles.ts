import type { SessionStore } from "@hermes/core";
import { describe, expect, it } from "vitest";
import { type ContractSuite, manualClock, rejection } from "../harness.js";

/** The error a promise rejects with (fails the test when it resolves). */
/**
 * A store holding one session per title, started in the given order (each 60 s after the
 * previous); session ids are `s0`, `s1`, …. A `null` title leaves the session untitled.
 */
async function titled(
  open: (o: { clock: () => number }) => Promise<SessionStore>,
  titles: Array<string | null>,
): Promise<SessionStore> {
  const clock = manualClock();
  const store = await open({ clock });
  for (const [i, title] of titles.entries()) {
    clock.advance(60);
    await store.createSession({ id: `s${i}`, source: "cli" });
    if (title !== null) await store.setSessionTitle(`s${i}`, title);
  }
  return store;
}

/** setSessionTitle, getSessionTitle, getSessionByTitle, resolveSessionByTitle, lineage (SPEC §5 "Titles"). */
export const titlesContract: ContractSuite = (backend) => {
  const open = (o: { clock: () => number }) => backend.open(o);

  describe(`titles [${backend.name}]`, () => {
    describe("setSessionTitle / getSessionTitle", () => {
      it("sets a sanitized title and returns true", async () => {
        const store = await backend.open();
        await store.createSession({ id: "s1", source: "cli" });
        expect(await store.getSessionTitle("s1")).toBeNull();
        expect(await store.setSessionTitle("s1", "  Fix\u200b  Docker\tbuild\u0000 ")).toBe(true);
        expect(await store.getSessionTitle("s1")).toBe("Fix Docker build");
        expect((await store.getSession("s1"))?.title).toBe("Fix Docker build");
      });

      it("an unknown session gives false and creates nothing", async () => {
        const store = await backend.open();
        expect(await store.setSessionTitle("ghost", "Anything")).toBe(false);
        expect(await store.getSession("ghost")).toBeNull();
        expect(await store.getSessionTitle("ghost")).toBeNull();
      });

      it("a title held by another session is TITLE_CONFLICT; neither session changes", async () => {
        const store = await backend.open();
        await store.createSession({ id: "s1", source: "cli" });
        await store.createSession({ id: "s2", source: "cli" });
        await store.setSessionTitle("s1", "Deploy");
        await store.setSessionTitle("s2", "Other");
        const error = await rejection(store.setSessionTitle("s2", "Deploy"));
        expect(error.code).toBe("TITLE_CONFLICT");
        expect(error.message).toContain("already in use by session s1");
        expect(error.message).toBe("Title 'Deploy' is already in use by session s1");
        expect(error).toMatchObject({ title: "Deploy", sessionId: "s1" });
        expect(await store.getSessionTitle("s1")).toBe("Deploy");
        expect(await store.getSessionTitle("s2")).toBe("Other");
      });

      it("the conflict is found after sanitizing", async () => {
        const store = await titled(open, ["Fix Docker"]);
        await store.createSession({ id: "x", source: "cli" });
        const error = await rejection(store.setSessionTitle("x", "  Fix \u200b  Docker "));
        expect(error.code).toBe("TITLE_CONFLICT");
        expect(error.message).toContain("'Fix Docker'");
      });

      it("the uniqueness check runs even for an unknown session id", async () => {
        const store = await titled(open, ["Deploy"]);
        const error = await rejection(store.setSessionTitle("ghost", "Deploy"));
        expect(error.code).toBe("TITLE_CONFLICT");
        expect(await store.getSession("ghost")).toBeNull();
      });

      it("a session may re-set its own title", async () => {
        const store = await titled(open, ["Deploy"]);
        expect(await store.setSessionTitle("s0", "Deploy")).toBe(true);
        expect(await store.setSessionTitle("s0", " Deploy ")).toBe(true);
        expect(await store.getSessionTitle("s0")).toBe("Deploy");
      });

      it("uniqueness is case-sensitive", async () => {
        const store = await titled(open, ["Deploy", null]);
        expect(await store.setSessionTitle("s1", "deploy")).toBe(true);
        expect(await store.getSessionTitle("s1")).toBe("deploy");
      });

      it.each([
        ["null", null],
        ["an empty string", ""],
        ["whitespace", " \t\n "],
        ["only invisible characters", "\u200b\ufeff\u0000"],
      ])("%s clears the title (true), and several sessions may be untitled", async (_label, value) => {
        const store = await titled(open, ["A", "B"]);
        expect(await store.setSessionTitle("s0", value)).toBe(true);
        expect(await store.setSessionTitle("s1", value)).toBe(true);
        expect(await store.getSessionTitle("s0")).toBeNull();
        expect(await store.getSessionTitle("s1")).toBeNull();
        // A cleared title is free again.
        await store.createSession({ id: "n", source: "cli" });
        expect(await store.setSessionTitle("n", "A")).toBe(true);
      });

      it("clearing an unknown session gives false", async () => {
        const store = await backend.open();
        expect(await store.setSessionTitle("ghost", null)).toBe(false);
      });

      it("TITLE_TOO_LONG (101 code points) before any write; 100 is fine", async () => {
        const store = await titled(open, ["Keep"]);
        const error = await rejection(store.setSessionTitle("s0", "t".repeat(101)));
        expect(error.code).toBe("TITLE_TOO_LONG");
        expect(error.message).toBe("Title too long (101 chars, max 100)");
        expect(await store.getSessionTitle("s0")).toBe("Keep");
        expect(await store.setSessionTitle("s0", "😀".repeat(100))).toBe(true);
        expect(await store.getSessionTitle("s0")).toBe("😀".repeat(100));
      });

      it("INVALID_ARGUMENT for an empty id or a non-string title", async () => {
        const store = await titled(open, ["Keep"]);
        expect((await rejection(store.setSessionTitle("", "x"))).code).toBe("INVALID_ARGUMENT");
        expect((await rejection(store.setSessionTitle("s0", 5 as never))).code).toBe("INVALID_ARGUMENT");
        expect((await rejection(store.getSessionTitle(""))).code).toBe("INVALID_ARGUMENT");
        expect(await store.getSessionTitle("s0")).toBe("Keep");
      });
    });

    describe("getSessionByTitle", () => {
      it("exact, case-sensitive, not sanitized", async () => {
        const store = await titled(open, ["Fix Docker", "Other"]);
        expect((await store.getSessionByTitle("Fix Docker"))?.id).toBe("s0");
        expect(await store.getSessionByTitle("fix docker")).toBeNull();
        expect(await store.getSessionByTitle(" Fix Docker")).toBeNull();
        expect(await store.getSessionByTitle("Fix")).toBeNull();
        expect(await store.getSessionByTitle("")).toBeNull();
      });

      it("returns the whole row", async () => {
        const store = await titled(open, ["T"]);
        expect(await store.getSessionByTitle("T")).toEqual(await store.getSession("s0"));
      });
    });

    describe("resolveSessionByTitle", () => {
      it("the exact match when there is no numbered variant; null when nothing matches", async () => {
        const store = await titled(open, ["Deploy", "Other #2"]);
        expect(await store.resolveSessionByTitle("Deploy")).toBe("s0");
        expect(await store.resolveSessionByTitle("Missing")).toBeNull();
      });

      it("the newest-started numbered variant wins over the exact match", async () => {
        // Started in this order: "Deploy", "Deploy #3", "Deploy #2" (newest).
        const store = await titled(open, ["Deploy", "Deploy #3", "Deploy #2"]);
        expect(await store.resolveSessionByTitle("Deploy")).toBe("s2");
      });

      it("variants without the exact title still resolve", async () => {
        const store = await titled(open, ["Deploy #2", "Deploy #5"]);
        expect(await store.resolveSessionByTitle("Deploy")).toBe("s1");
      });

      it("'X #2' looks for 'X #2 #…' variants, then exactly 'X #2'", async () => {
        const store = await titled(open, ["X", "X #2", "X #3"]);
        expect(await store.resolveSessionByTitle("X #2")).toBe("s1");
        const more = await titled(open, ["X", "X #2", "X #3", "X #2 #2"]);
        expect(await more.resolveSessionByTitle("X #2")).toBe("s3");
      });

      it("any suffix after ' #' counts as a variant, numeric or not", async () => {
        const store = await titled(open, ["Deploy", "Deploy #foo"]);
        expect(await store.resolveSessionByTitle("Deploy")).toBe("s1");
      });

      it("variants match ASCII letters case-insensitively (SQLite LIKE)", async () => {
        const store = await titled(open, ["Deploy", "deploy #2"]);
        expect(await store.resolveSessionByTitle("Deploy")).toBe("s1");
      });

      it.each([
        ["'_'", "a_b", "axb #2"],
        ["'%'", "50%", "50% off #2"],
        ["'%' (prefix)", "5%", "55 #2"],
      ])("%s in the title is literal in the variant pattern", async (_label, exact, lookalike) => {
        const store = await titled(open, [exact, lookalike]);
        expect(await store.resolveSessionByTitle(exact)).toBe("s0");
      });

      it("'\\' in the title is literal in the variant pattern", async () => {
        const store = await titled(open, ["a\\b", "a\\b #2", "ab #3"]);
        expect(await store.resolveSessionByTitle("a\\b")).toBe("s1");
        const other = await titled(open, ["a\\b", "ab #3"]);
        expect(await other.resolveSessionByTitle("a\\b")).toBe("s0");
      });

      it("the input is not sanitized", async () => {
        const store = await titled(open, ["Deploy"]);
        expect(await store.resolveSessionByTitle(" Deploy ")).toBeNull();
      });

      it("INVALID_ARGUMENT for a non-string title", async () => {
        const store = await backend.open();
        expect((await rejection(store.resolveSessionByTitle(null as never))).code).toBe("INVALID_ARGUMENT");
        expect((await rejection(store.getSessionByTitle(1 as never))).code).toBe("INVALID_ARGUMENT");
      });
    });

    describe("getNextTitleInLineage", () => {
      it.each<[string, Array<string | null>, string, string]>([
        ["nothing exists: the base, unchanged", [], "Deploy", "Deploy"],
        ["nothing exists: the base without its number", [], "Deploy #5", "Deploy"],
        ["the original counts as 1", ["Deploy"], "Deploy", "Deploy #2"],
        ["max + 1", ["Deploy", "Deploy #2"], "Deploy", "Deploy #3"],
        ["from a numbered title", ["Deploy", "Deploy #2"], "Deploy #2", "Deploy #3"],
        ["gaps are not filled", ["Deploy #2", "Deploy #7"], "Deploy", "Deploy #8"],
        ["gaps with the original", ["Deploy", "Deploy #2", "Deploy #7"], "Deploy #2", "Deploy #8"],
        ["a non-numeric variant exists: #2", ["Deploy #foo"], "Deploy", "Deploy #2"],
        ["the last number of a title counts", ["Deploy #2 #9"], "Deploy", "Deploy #10"],
        [
          "only the last number is stripped (base 'Deploy #2', whose own #2 counts)",
          ["Deploy #2"],
          "Deploy #2 #3",
          "Deploy #2 #3",
        ],
        ["other titles do not count", ["Deployment #9", "Deploy#4", "Deploy"], "Deploy", "Deploy #2"],
        [
          "LIKE counts other ASCII case",
          ["Fix Docker Build", "fix docker build #5"],
          "Fix Docker Build",
          "Fix Docker Build #6",
        ],
        [
          "'=' does not: a lower-case original alone",
          ["fix docker build"],
          "Fix Docker Build",
          "Fix Docker Build",
        ],
        ["'_' is literal", ["axb #4"], "a_b", "a_b"],
        ["'%' is literal", ["100% #3", "100%x #9", "1000 #8"], "100%", "100% #4"],
        ["'\\' is literal", ["c:\\dir", "c:\\dir #2", "c:dir #6"], "c:\\dir", "c:\\dir #3"],
        ["Unicode decimal digits count (Python's \\d and int())", ["Deploy #\u0663"], "Deploy", "Deploy #4"],
        [
          "numbers beyond 2^53 stay exact",
          ["Deploy #99999999999999999999"],
          "Deploy",
          "Deploy #100000000000000000000",
        ],
      ])("%s", async (_label, existing, input, expected) => {
        const store = await titled(open, existing);
        expect(await store.getNextTitleInLineage(input)).toBe(expected);
      });

      it("follows titles as they are set (the usual flow)", async () => {
        // A manual clock gives each session its own start time: resolveSessionByTitle picks the
        // most recently started variant, and two sessions created within one millisecond tie.
        const store = await backend.open({ clock: manualClock() });
        const ids = ["a", "b", "c"];
        for (const id of ids) await store.createSession({ id, source: "cli" });
        await store.setSessionTitle("a", "Refactor");
        await store.setSessionTitle("b", await store.getNextTitleInLineage("Refactor"));
        await store.setSessionTitle("c", await store.getNextTitleInLineage("Refactor #2"));
        expect(await store.getSessionTitle("b")).toBe("Refactor #2");
        expect(await store.getSessionTitle("c")).toBe("Refactor #3");
        expect(await store.resolveSessionByTitle("Refactor")).toBe("c");
      });

      it("INVALID_ARGUMENT for a non-string base", async () => {
        const store = await backend.open();
        expect((await rejection(store.getNextTitleInLineage(undefined as never))).code).toBe(
          "INVALID_ARGUMENT",
        );
      });
    });
  });
};
