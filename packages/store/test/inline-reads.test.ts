import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSessionStore } from "../dist/index.js";
import { INLINE_BUDGET_MS, InlineReads, RETRY_AFTER } from "../dist/reads/inline-reads.js";
import { tempDir } from "./helpers/temp-dir.js";

describe("cheap reads answered in-thread with a pool", () => {
  it("key lookups and an unfiltered first page of at most 20 rows; anything else goes to the pool", () => {
    const inline = new InlineReads();
    expect(inline.wants("getSession", ["s1"])).toBe(true);
    expect(inline.wants("getSessionTitle", ["s1"])).toBe(true);
    expect(inline.wants("getMeta", ["k"])).toBe(true);
    expect(inline.wants("listSessionsRich", [])).toBe(true);
    expect(inline.wants("listSessionsRich", [{ limit: 20, offset: 0 }])).toBe(true);
    expect(inline.wants("listSessionsRich", [{ limit: 5, includeChildren: true }])).toBe(true);
    expect(inline.wants("listSessionsRich", [{ limit: 21 }])).toBe(false);
    expect(inline.wants("listSessionsRich", [{ offset: 20 }])).toBe(false);
    expect(inline.wants("listSessionsRich", [{ source: "cli" }])).toBe(false);
    expect(inline.wants("listSessionsRich", [{ excludeSources: ["tool"] }])).toBe(false);
    expect(inline.wants("listSessionsRich", [{ includeArchived: true }])).toBe(false);
    expect(inline.wants("listSessionsRich", ["not options"])).toBe(false);
    expect(inline.wants("searchSessions", [])).toBe(false);
    expect(inline.wants("getMessages", ["s1"])).toBe(false);
  });

  it("a method whose median in-thread time is over budget goes to the pool; one stall does not", () => {
    const inline = new InlineReads();
    const cheap = INLINE_BUDGET_MS / 10;
    const dear = INLINE_BUDGET_MS * 5;
    // One stall of a busy machine among cheap answers: the median stays cheap.
    for (let i = 0; i < 20; i++) inline.note("getSession", i === 7 ? 500 : cheap);
    expect(inline.wants("getSession", ["s1"])).toBe(true);
    // Seven answers are not enough to judge; the eighth over budget tips the median of eight.
    for (let i = 0; i < 7; i++) inline.note("listSessionsRich", dear);
    expect(inline.wants("listSessionsRich", [])).toBe(true);
    inline.note("listSessionsRich", dear);
    expect(inline.wants("listSessionsRich", [])).toBe(false);
    expect([...inline.demoted]).toEqual(["listSessionsRich"]);
    // Only that method: the others keep their rule.
    expect(inline.wants("getMeta", ["k"])).toBe(true);
  });

  it("a demoted method is tried in-thread again after RETRY_AFTER calls, twice as late while it stays dear", () => {
    const inline = new InlineReads();
    const cheap = INLINE_BUDGET_MS / 10;
    const dear = INLINE_BUDGET_MS * 5;
    const judge = (ms: number) => {
      for (let i = 0; i < 8; i++) {
        expect(inline.wants("listSessionsRich", [])).toBe(true);
        inline.note("listSessionsRich", ms);
      }
    };
    /** Calls of the method routed to the pool before the next one is answered in-thread. */
    const pooledCalls = () => {
      let n = 0;
      while (n <= 1_000_000 && !inline.wants("listSessionsRich", [])) n++; // bounded: a failure, not a hang
      return n;
    };
    judge(dear); // a cold start: eight dear answers
    expect(inline.demoted.has("listSessionsRich")).toBe(true);
    // A call that is not a cheap read is not counted toward the retry.
    expect(inline.wants("listSessionsRich", [{ offset: 20 }])).toBe(false);
    expect(pooledCalls()).toBe(RETRY_AFTER);
    // The retry's call (counted above as the one answered in-thread) plus seven more: still dear.
    inline.note("listSessionsRich", dear);
    for (let i = 0; i < 7; i++) {
      expect(inline.wants("listSessionsRich", [])).toBe(true);
      inline.note("listSessionsRich", dear);
    }
    expect(inline.demoted.has("listSessionsRich")).toBe(true);
    expect(pooledCalls()).toBe(RETRY_AFTER * 2);
    // Cheap now (the load went away): it stays in-thread.
    inline.note("listSessionsRich", cheap);
    judge(cheap);
    expect(inline.demoted.has("listSessionsRich")).toBe(false);
    for (let i = 0; i < 1000; i++) expect(inline.wants("listSessionsRich", [])).toBe(true);
    // Dear again later: the wait starts over from RETRY_AFTER, since it was found cheap in between.
    for (let i = 0; i < 8 && !inline.demoted.has("listSessionsRich"); i++)
      inline.note("listSessionsRich", dear);
    expect(inline.demoted.has("listSessionsRich")).toBe(true);
    expect(pooledCalls()).toBe(RETRY_AFTER);
  });

  it("in a store with a warm pool, cheap reads never reach a worker and answer as a worker does", async () => {
    const store = await openSessionStore({ path: join(tempDir("hermes-inline-"), "state.db"), readers: 1 });
    try {
      await store.readPool!.warmUp(1);
      for (let i = 0; i < 25; i++) {
        await store.createSession({ id: `s${i}`, source: i % 2 === 0 ? "cli" : "tool" });
        await store.appendMessage({ sessionId: `s${i}`, role: "user", content: `hello ${i}` });
      }
      await store.setSessionTitle("s3", "Three");
      await store.setMeta("k", "v");
      const pool = store.readPool!;
      const before = pool.served;
      const session = await store.getSession("s3");
      const title = await store.getSessionTitle("s3");
      const meta = await store.getMeta("k");
      const page = await store.listSessionsRich({ limit: 20 });
      expect(pool.served - before).toBe(0);
      expect(session).toEqual(await pool.call("getSession", ["s3"]));
      expect(title).toBe("Three");
      expect(meta).toBe("v");
      expect(page).toHaveLength(20);
      expect(page).toEqual(await pool.call("listSessionsRich", [{ limit: 20 }]));
      // Pages that are not the first, larger or filtered ones go to the worker.
      const served = pool.served;
      expect(await store.listSessionsRich({ limit: 20, offset: 20 })).toHaveLength(5);
      expect(await store.listSessionsRich({ limit: 25 })).toHaveLength(25);
      expect((await store.listSessionsRich({ source: "tool" })).every((r) => r.source === "tool")).toBe(true);
      expect(pool.served - served).toBe(3);
    } finally {
      await store.close();
    }
  });
});
