import type { SessionPageRow, SessionStore } from "@hermes/core";
import { describe, expect, it } from "vitest";
import { type ContractSuite, manualClock, rejection } from "../harness.js";

const T0 = 1_767_225_600;

/** Every page of `listSessionPage` with these options, following the cursor. */
async function allPages(
  store: SessionStore,
  o: Parameters<SessionStore["listSessionPage"]>[0] = {},
): Promise<SessionPageRow[][]> {
  const pages: SessionPageRow[][] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await store.listSessionPage({ ...o, ...(cursor ? { cursor } : {}) });
    pages.push(page.sessions);
    if (page.nextCursor === null) return pages;
    cursor = page.nextCursor;
  }
}

/**
 * A history with every kind of link: `chain` compressed into `chain-2` then `chain-3` (live),
 * `work` with a sub-agent run, a branch of `work` listed on its own, and plain sessions.
 */
async function seedLineage(open: (o: { clock: () => number }) => Promise<SessionStore>) {
  const clock = manualClock(T0);
  const store = await open({ clock });
  const at = (t: number) => clock.set(T0 + t);
  const say = (sessionId: string, content: string, role = "user") =>
    store.appendMessage({ sessionId, role, content });
  at(0);
  await store.createSession({ id: "chain", source: "cli", model: "m1" });
  await store.setSessionTitle("chain", "Fix Docker build");
  await say("chain", "first");
  at(100);
  await store.endSession("chain", "compression");
  await store.createSession({ id: "chain-2", source: "cli", model: "m1", parentSessionId: "chain" });
  await say("chain-2", "second");
  at(200);
  await store.endSession("chain-2", "compression");
  await store.createSession({ id: "chain-3", source: "cli", model: "m1", parentSessionId: "chain-2" });
  at(5000);
  await say("chain-3", "newest of all");
  at(300);
  await store.createSession({ id: "work", source: "telegram", model: "m2" });
  await store.setSessionTitle("work", "100% done_ish");
  await say("work", "telegram work");
  at(310);
  await store.createSession({ id: "work-agent", source: "subagent", model: "m2", parentSessionId: "work" });
  at(320);
  await say("work-agent", "sub-agent result", "assistant");
  await store.endSession("work-agent", "completed");
  at(400);
  await store.endSession("work", "branched");
  at(410);
  await store.createSession({ id: "work-branch", source: "telegram", model: "m2", parentSessionId: "work" });
  await say("work-branch", "a branch");
  await store.endSession("work-branch", "user_exit");
  for (let i = 0; i < 7; i++) {
    at(1000 + i * 10);
    await store.createSession({ id: `plain-${i}`, source: i % 2 === 0 ? "cron" : "discord", model: "m3" });
    await say(`plain-${i}`, `plain ${i}`);
    await store.endSession(`plain-${i}`, "user_exit");
  }
  return store;
}

/** A small seeded generator (the same history on every backend and run). */
function seeded(seed: number) {
  let x = seed >>> 0;
  return (n: number) => {
    x = (Math.imul(x, 1_664_525) + 1_013_904_223) >>> 0;
    return x % n;
  };
}

/**
 * A random history of every kind of link and timing: compression chains, sub-agent runs,
 * branches (one reopened afterwards), a deleted parent, sessions without messages, messages
 * added to old sessions later, and sessions that start after their chain's newest message.
 * Returns the store and every id it created.
 */
async function seedRandomHistory(open: (o: { clock: () => number }) => Promise<SessionStore>, seed: number) {
  const clock = manualClock(T0);
  const store = await open({ clock });
  const rnd = seeded(seed);
  const ids: string[] = [];
  const open_: string[] = [];
  let t = 0;
  const step = (seconds: number) => {
    t += seconds;
    clock.set(T0 + t);
  };
  const say = async (id: string, n: number) => {
    for (let i = 0; i < n; i++) {
      step(1 + rnd(5));
      await store.appendMessage({
        sessionId: id,
        role: i % 2 ? "assistant" : "user",
        content: `m ${id} ${i}`,
      });
    }
  };
  for (let i = 0; i < 90; i++) {
    const id = `s${String(i).padStart(3, "0")}`;
    const kind = rnd(10);
    const parent = ids.length > 0 ? ids[rnd(ids.length)]! : undefined;
    step(rnd(3) === 0 ? 0 : 1 + rnd(20));
    if (kind < 2 && parent !== undefined && open_.includes(parent)) {
      // A continuation: the parent ends by compression, the child carries on.
      await store.endSession(parent, "compression");
      open_.splice(open_.indexOf(parent), 1);
      await store.createSession({ id, source: "cli", model: "m1", parentSessionId: parent });
    } else if (kind < 3 && parent !== undefined) {
      await store.createSession({ id, source: "subagent", model: "m2", parentSessionId: parent });
    } else if (kind < 4 && parent !== undefined && open_.includes(parent)) {
      await store.endSession(parent, "branched");
      open_.splice(open_.indexOf(parent), 1);
      step(1);
      await store.createSession({ id, source: "cli", model: "m1", parentSessionId: parent });
    } else {
      await store.createSession({ id, source: rnd(2) ? "cli" : "telegram", model: "m3" });
    }
    ids.push(id);
    open_.push(id);
    await say(id, rnd(4));
    // Now and then an old session gets a message, or ends.
    if (rnd(4) === 0) await say(ids[rnd(ids.length)]!, 1);
    if (rnd(5) === 0 && open_.length > 3) {
      const ended = open_.splice(rnd(open_.length), 1)[0]!;
      await store.endSession(ended, "user_exit");
    }
  }
  const branched = [];
  for (const id of ids) if ((await store.getSession(id))?.end_reason === "branched") branched.push(id);
  if (branched[0] !== undefined) await store.reopenSession(branched[0]);
  await store.deleteSession(ids[5]!);
  return { store, ids };
}

/** The order and figures of every listed session, computed the slow way from each session's rows. */
async function bruteForcePage(store: SessionStore, ids: readonly string[], sources?: string[]) {
  const rows = new Map<
    string,
    {
      parent: string | null;
      started: number;
      ended: number | null;
      reason: string | null;
      source: string;
      own: number;
    }
  >();
  for (const id of ids) {
    const s = await store.getSession(id);
    if (s === null) continue;
    const times = (await store.getMessages(id)).map((m) => m.timestamp);
    rows.set(id, {
      parent: s.parent_session_id,
      started: s.started_at,
      ended: s.ended_at,
      reason: s.end_reason,
      source: s.source,
      own: times.length > 0 ? Math.max(...times) : s.started_at,
    });
  }
  const top = (id: string) => {
    const r = rows.get(id)!;
    const p = r.parent === null ? undefined : rows.get(r.parent);
    return p === undefined || (p.reason === "branched" && p.ended !== null && r.started >= p.ended);
  };
  const rootOf = (id: string) => {
    let cur = id;
    for (let depth = 0; !top(cur) && depth < 100; depth++) cur = rows.get(cur)!.parent!;
    return top(cur) ? cur : null;
  };
  const chains = new Map<string, string[]>();
  for (const id of rows.keys()) {
    const root = rootOf(id);
    if (root !== null) chains.set(root, [...(chains.get(root) ?? []), id]);
  }
  return [...chains]
    .filter(([root]) => sources === undefined || sources.includes(rows.get(root)!.source))
    .map(([root, members]) => ({
      id: root,
      started: rows.get(root)!.started,
      chain_last_active: Math.max(...members.map((m) => rows.get(m)!.own)),
      chain_sessions: members.length - 1,
      chain_open: members.some((m) => rows.get(m)!.ended === null),
    }))
    .sort((a, b) =>
      a.chain_last_active !== b.chain_last_active
        ? b.chain_last_active - a.chain_last_active
        : a.started !== b.started
          ? b.started - a.started
          : a.id < b.id
            ? 1
            : -1,
    )
    .map(({ started: _, ...r }) => r);
}

/** listSessionPage and getMessagePage: what a session browser reads. */
export const browsingContract: ContractSuite = (backend) => {
  const open = (o: { clock: () => number }) => backend.open(o);

  describe(`browsing [${backend.name}]`, () => {
    describe("listSessionPage", () => {
      it("reaches every listed session once through the cursor, newest chain activity first", async () => {
        const store = await seedLineage(open);
        const pages = await allPages(store, { limit: 3 });
        expect(pages.map((p) => p.length)).toEqual([3, 3, 3, 1]);
        const rows = pages.flat();
        expect(rows.map((r) => r.id)).toEqual([
          "chain",
          "plain-6",
          "plain-5",
          "plain-4",
          "plain-3",
          "plain-2",
          "plain-1",
          "plain-0",
          "work-branch",
          "work",
        ]);
        const keys = rows.map((r) => r.chain_last_active);
        expect([...keys].sort((a, b) => b - a)).toEqual(keys);
        // One page of everything gives the same rows.
        const one = await store.listSessionPage({ limit: 500 });
        expect(one.nextCursor).toBeNull();
        expect(one.sessions.map((r) => r.id)).toEqual(rows.map((r) => r.id));
      });

      it("lists continuations and sub-agent runs under their chain, branches on their own", async () => {
        const store = await seedLineage(open);
        const rows = (await store.listSessionPage()).sessions;
        const byId = new Map(rows.map((r) => [r.id, r]));
        for (const hidden of ["chain-2", "chain-3", "work-agent"]) expect(byId.has(hidden)).toBe(false);
        const chain = byId.get("chain")!;
        const tip = (await store.getMessages("chain-3"))[0]!;
        expect(chain.chain_sessions).toBe(2);
        expect(chain.chain_last_active).toBe(tip.timestamp);
        expect(chain.last_active).toBe((await store.getMessages("chain"))[0]!.timestamp);
        expect(chain.chain_open).toBe(true);
        expect(chain.title).toBe("Fix Docker build");
        expect(chain.preview).toBe("first");
        const work = byId.get("work")!;
        expect(work.chain_sessions).toBe(1);
        expect(work.chain_open).toBe(false);
        expect(byId.get("work-branch")?.chain_sessions).toBe(0);
        expect(byId.get("plain-0")?.chain_open).toBe(false);
        // Every column of the session is there.
        const { last_active, preview, chain_last_active, chain_sessions, chain_open, ...columns } = work;
        expect(columns).toEqual(await store.getSession("work"));
      });

      it("lists the continuation of a deleted session as the top of what is left of its chain", async () => {
        const store = await seedLineage(open);
        await store.deleteSession("chain");
        const rows = (await allPages(store)).flat();
        const ids = rows.map((r) => r.id);
        expect(ids).toContain("chain-2");
        expect(rows.find((r) => r.id === "chain-2")?.chain_sessions).toBe(1);
        expect(ids).not.toContain("chain-3");
      });

      it("filters by source, model, start time and title or id", async () => {
        const store = await seedLineage(open);
        const ids = async (o: Parameters<SessionStore["listSessionPage"]>[0]) =>
          (await allPages(store, { ...o, limit: 2 })).flat().map((r) => r.id);
        expect(await ids({ sources: ["discord"] })).toEqual(["plain-5", "plain-3", "plain-1"]);
        expect(await ids({ sources: ["telegram", "cli"] })).toEqual(["chain", "work-branch", "work"]);
        expect(await ids({ models: ["m2"] })).toEqual(["work-branch", "work"]);
        expect(await ids({ sources: ["cron"], models: ["m2"] })).toEqual([]);
        expect(await ids({ startedAfter: T0 + 1020, startedBefore: T0 + 1050 })).toEqual([
          "plain-4",
          "plain-3",
          "plain-2",
        ]);
        expect(await ids({ title: "docker" })).toEqual(["chain"]);
        expect(await ids({ title: "DOCKER BUILD" })).toEqual(["chain"]);
        // LIKE wildcards are the characters themselves.
        expect(await ids({ title: "100%" })).toEqual(["work"]);
        expect(await ids({ title: "0% done_" })).toEqual(["work"]);
        expect(await ids({ title: "don_" })).toEqual([]);
        expect(await ids({ title: "1%done" })).toEqual([]);
        expect(await ids({ title: "plain-" })).toEqual([
          "plain-6",
          "plain-5",
          "plain-4",
          "plain-3",
          "plain-2",
          "plain-1",
          "plain-0",
        ]);
        expect(await ids({ sources: [], models: [] })).toHaveLength(10);
      });

      it("orders a random history exactly as the slow computation from every session's rows", async () => {
        for (const seed of [1, 2]) {
          const { store, ids } = await seedRandomHistory(open, seed);
          for (const sources of [undefined, ["telegram"]]) {
            const expected = await bruteForcePage(store, ids, sources);
            const got = (await allPages(store, { limit: 7, ...(sources ? { sources } : {}) }))
              .flat()
              .map((r) => ({
                id: r.id,
                chain_last_active: r.chain_last_active,
                chain_sessions: r.chain_sessions,
                chain_open: r.chain_open,
              }));
            expect(got, `seed ${seed} ${sources ?? "all"}`).toEqual(expected);
          }
        }
      });

      it("rejects a cursor it did not make and a page of 0", async () => {
        const store = await seedLineage(open);
        for (const cursor of [
          "nonsense",
          Buffer.from("[1,2]").toString("base64url"),
          "W251bGwsbnVsbCxudWxsXQ",
        ]) {
          expect((await rejection(store.listSessionPage({ cursor }))).code).toBe("INVALID_ARGUMENT");
        }
        expect((await rejection(store.listSessionPage({ limit: 0 }))).code).toBe("INVALID_ARGUMENT");
        expect((await rejection(store.listSessionPage({ limit: 501 }))).code).toBe("INVALID_ARGUMENT");
        expect((await rejection(store.listSessionPage({ sources: "cli" as unknown as string[] }))).code).toBe(
          "INVALID_ARGUMENT",
        );
      });
    });

    describe("getMessagePage", () => {
      async function longSession() {
        const clock = manualClock(T0);
        const store = await open({ clock });
        await store.createSession({ id: "long", source: "cli" });
        await store.createSession({ id: "other", source: "cli" });
        const ids: number[] = [];
        for (let i = 0; i < 25; i++) {
          ids.push(
            await store.appendMessage({
              sessionId: "long",
              role: i % 2 === 0 ? "user" : "assistant",
              content: `m${i}`,
              ...(i === 3 ? { toolCalls: [{ id: "c1", type: "function", function: { name: "ls" } }] } : {}),
            }),
          );
        }
        const otherId = await store.appendMessage({ sessionId: "other", role: "user", content: "x" });
        return { store, ids, otherId };
      }
      const contents = (p: { messages: Array<{ content: string | null }> }) =>
        p.messages.map((m) => m.content);

      it("reads the first and the last page with the counts around them", async () => {
        const { store } = await longSession();
        const first = await store.getMessagePage("long", { limit: 10 });
        expect(contents(first)).toEqual(["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"]);
        expect([first.before, first.after]).toEqual([0, 15]);
        expect(first.messages[3]?.tool_calls).toEqual([
          { id: "c1", type: "function", function: { name: "ls" } },
        ]);
        expect(first.messages[0]).toEqual((await store.getMessages("long"))[0]);
        const last = await store.getMessagePage("long", { from: "end", limit: 10 });
        expect(contents(last)).toEqual([
          "m15",
          "m16",
          "m17",
          "m18",
          "m19",
          "m20",
          "m21",
          "m22",
          "m23",
          "m24",
        ]);
        expect([last.before, last.after]).toEqual([15, 0]);
        const empty = await store.getMessagePage("nobody");
        expect(empty).toEqual({ messages: [], before: 0, after: 0 });
      });

      it("walks forward and backward from a message without gaps", async () => {
        const { store, ids } = await longSession();
        const seen: string[] = [];
        let page = await store.getMessagePage("long", { limit: 7 });
        seen.push(...contents(page).map(String));
        while (page.after > 0) {
          page = await store.getMessagePage("long", { afterId: page.messages.at(-1)!.id, limit: 7 });
          seen.push(...contents(page).map(String));
        }
        expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `m${i}`));
        const back = await store.getMessagePage("long", { beforeId: ids[10]!, limit: 4 });
        expect(contents(back)).toEqual(["m6", "m7", "m8", "m9"]);
        expect([back.before, back.after]).toEqual([6, 15]);
        const atStart = await store.getMessagePage("long", { beforeId: ids[0]!, limit: 4 });
        expect(atStart).toEqual({ messages: [], before: 0, after: 25 });
        const atEnd = await store.getMessagePage("long", { afterId: ids[24]!, limit: 4 });
        expect(atEnd).toEqual({ messages: [], before: 25, after: 0 });
      });

      it("opens around a message: a quarter of the page before it, filled up near the end", async () => {
        const { store, ids } = await longSession();
        const around = await store.getMessagePage("long", { aroundId: ids[12]!, limit: 8 });
        expect(contents(around)).toEqual(["m10", "m11", "m12", "m13", "m14", "m15", "m16", "m17"]);
        expect([around.before, around.after]).toEqual([10, 7]);
        const nearEnd = await store.getMessagePage("long", { aroundId: ids[23]!, limit: 8 });
        expect(contents(nearEnd)).toEqual(["m17", "m18", "m19", "m20", "m21", "m22", "m23", "m24"]);
        const nearStart = await store.getMessagePage("long", { aroundId: ids[0]!, limit: 4 });
        expect(contents(nearStart)).toEqual(["m0", "m1", "m2", "m3"]);
        const whole = await store.getMessagePage("long", { aroundId: ids[5]!, limit: 100 });
        expect(contents(whole)).toHaveLength(25);
        expect([whole.before, whole.after]).toEqual([0, 0]);
      });

      it("rejects a message of another session, two anchors and bad limits", async () => {
        const { store, ids, otherId } = await longSession();
        for (const o of [
          { aroundId: otherId },
          { afterId: 99_999 },
          { afterId: ids[1]!, beforeId: ids[2]! },
          { aroundId: ids[1]!, from: "end" as const },
          { from: "middle" as "end" },
          { limit: 0 },
          { limit: 1001 },
          { afterId: 1.5 },
        ]) {
          expect((await rejection(store.getMessagePage("long", o))).code).toBe("INVALID_ARGUMENT");
        }
        expect((await rejection(store.getMessagePage(""))).code).toBe("INVALID_ARGUMENT");
      });
    });
  });
};
