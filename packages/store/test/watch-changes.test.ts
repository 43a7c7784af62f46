import { join } from "node:path";
import { openSessionStore, type StoreChange } from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { startChild } from "./helpers/child-process.js";
import { copyOfFixture, copyOfSample, SAMPLE_DB, tempDir, V30_SAMPLE_DB } from "./helpers/temp-dir.js";

/** Pulls changes from a feed until `done` says it has what it waits for (or 10 s pass). */
async function collect(
  feed: AsyncIterator<StoreChange>,
  done: (all: StoreChange[]) => boolean,
): Promise<StoreChange[]> {
  const all: StoreChange[] = [];
  const deadline = Date.now() + 10_000;
  while (!done(all)) {
    if (Date.now() > deadline) throw new Error(`feed stalled: ${JSON.stringify(all)}`);
    const next = await feed.next();
    if (next.done) break;
    all.push(next.value);
  }
  return all;
}

describe("watchChanges: a change feed over the file", { timeout: 60_000 }, () => {
  it("reports another process's new sessions, messages and other commits, from a cursor at the start", async () => {
    const path = copyOfSample();
    const store = await openSessionStore({ path });
    const ac = new AbortController();
    const feed = store
      .watchChanges({ signal: ac.signal, intervalMs: 20, includeMessages: true })
      [Symbol.asyncIterator]();
    const first = feed.next(); // starts the feed: its cursor is the highest id now
    const writer = startChild("feed-writer.mjs", [path]);
    await writer.waitForLine("ready");
    const send = async (n: number, command: object) => {
      writer.process.stdin!.write(`${JSON.stringify(command)}\n`);
      await writer.waitForLine(`done ${n}`);
    };
    try {
      await send(1, { create: "live-1", source: "telegram" });
      await send(2, { append: "live-1", content: "first words" });
      await send(3, { append: "20260101_090000_cli001", content: "back to docker" });
      const changes = [(await first).value as StoreChange];
      changes.push(
        ...(await collect(feed, (all) => [...changes, ...all].flatMap((c) => c.messages ?? []).length >= 2)),
      );
      const all = changes;
      expect(all.flatMap((c) => c.newSessionIds)).toEqual(["live-1"]);
      const messages = all.flatMap((c) => c.messages ?? []);
      expect(messages.map((m) => [m.session_id, m.content])).toEqual([
        ["live-1", "first words"],
        ["20260101_090000_cli001", "back to docker"],
      ]);
      // Ids only grow; each change starts where the previous one ended.
      for (let i = 1; i < all.length; i++) expect(all[i]!.afterMessageId).toBe(all[i - 1]!.lastMessageId);
      expect(all.at(-1)!.lastMessageId).toBe(messages.at(-1)!.id);
      expect(new Set(all.flatMap((c) => c.updatedSessionIds))).toEqual(
        new Set(["live-1", "20260101_090000_cli001"]),
      );
      // A commit that adds no row (a title) is still a change, with nothing new in it.
      await send(4, { title: "live-1", value: "Live one" });
      const [titled] = await collect(feed, (c) => c.length >= 1);
      expect(titled).toMatchObject({ newSessionIds: [], updatedSessionIds: [], messages: [] });
      expect(titled!.lastMessageId).toBe(titled!.afterMessageId);
    } finally {
      writer.process.stdin!.end();
      await writer.exited;
      ac.abort();
      await store.close();
    }
  });

  it.each(["inline", "thread"] as const)(
    "sees this store's own writes, follows one session, batches, resumes from a cursor, ends on abort (writer: %s)",
    async (writer) => {
      const path = join(tempDir(), "state.db");
      const store = await openSessionStore({ path, writer });
      await store.createSession({ id: "a", source: "cli" });
      await store.createSession({ id: "b", source: "cli" });
      const ac = new AbortController();
      const feed = store
        .watchChanges({
          signal: ac.signal,
          intervalMs: 10,
          sessionId: "a",
          includeMessages: true,
          batchSize: 2,
        })
        [Symbol.asyncIterator]();
      const started = feed.next();
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(
          await store.appendMessage({ sessionId: i % 2 === 0 ? "a" : "b", role: "user", content: `m${i}` }),
        );
      }
      const changes = [(await started).value as StoreChange];
      changes.push(
        ...(await collect(feed, (all) => [...changes, ...all].flatMap((c) => c.messages ?? []).length >= 3)),
      );
      // Only session a's messages, two at most per change, none skipped.
      expect(changes.flatMap((c) => c.messages ?? []).map((m) => m.content)).toEqual(["m0", "m2", "m4"]);
      expect(changes.every((c) => (c.messages?.length ?? 0) <= 2)).toBe(true);
      expect(changes.flatMap((c) => c.newSessionIds)).toEqual([]);
      ac.abort();
      expect((await feed.next()).done).toBe(true);

      // Resumed from a cursor, without messages: what came after it is reported at once.
      const resumed = store.watchChanges({ afterMessageId: ids[1]!, intervalMs: 10 })[Symbol.asyncIterator]();
      const change = (await resumed.next()).value as StoreChange;
      expect(change).toMatchObject({ afterMessageId: ids[1], lastMessageId: ids[4] });
      expect(change.updatedSessionIds.sort()).toEqual(["a", "b"]);
      expect(change.messages).toBeUndefined();
      await resumed.return?.();
      await store.close();
    },
  );

  it("rejects bad options with INVALID_ARGUMENT and a closed store with STORE_CLOSED", async () => {
    const store = await openSessionStore({ path: join(tempDir(), "state.db") });
    for (const o of [
      { intervalMs: 1 },
      { intervalMs: -5 },
      { batchSize: 0 },
      { afterMessageId: 1.5 },
      { sessionId: "" },
    ]) {
      expect(() => store.watchChanges(o as never), JSON.stringify(o)).toThrow(
        expect.objectContaining({ code: "INVALID_ARGUMENT" }),
      );
    }
    const feed = store.watchChanges({ intervalMs: 10 })[Symbol.asyncIterator]();
    const pending = feed.next();
    await store.close();
    await expect(pending).rejects.toMatchObject({ code: "STORE_CLOSED" });
    expect(() => store.watchChanges()).toThrow(expect.objectContaining({ code: "STORE_CLOSED" }));
  });
});

describe("watchChanges on a read-only store", { timeout: 60_000 }, () => {
  /**
   * A read-only snapshot of the v11 sample watches while a writer, opened after it, adds session
   * `id` with one message; `closeFirst`: the writer also closes (its WAL checkpointed and
   * removed) before the feed looks. Returns the changes up to the one carrying the message.
   */
  async function snapshotSees(id: string, content: string, o: { intervalMs: number; closeFirst: boolean }) {
    const path = copyOfFixture(SAMPLE_DB, 0o600);
    const reader = await openSessionStore({ path, readOnly: true });
    const ac = new AbortController();
    try {
      expect(reader.access.readOnlyAccess).toBe("snapshot");
      const feed = reader
        .watchChanges({ signal: ac.signal, intervalMs: o.intervalMs, includeMessages: true })
        [Symbol.asyncIterator]();
      const first = feed.next();
      const writer = await openSessionStore({ path });
      await writer.createSession({ id, source: "cli" });
      await writer.appendMessage({ sessionId: id, role: "user", content });
      if (o.closeFirst) await writer.close();
      const changes = [(await first).value as StoreChange];
      changes.push(...(await collect(feed, (all) => [...changes, ...all].some((c) => c.messages?.length))));
      if (!o.closeFirst) await writer.close();
      return changes;
    } finally {
      ac.abort();
      await reader.close();
    }
  }

  it("a snapshot of a v11 file follows a writer that starts later", async () => {
    const changes = await snapshotSees("late", "written after the reader", {
      intervalMs: 20,
      closeFirst: false,
    });
    expect(changes.flatMap((c) => c.newSessionIds)).toEqual(["late"]);
    expect(changes.flatMap((c) => c.messages ?? []).map((m) => m.content)).toEqual([
      "written after the reader",
    ]);
  });

  it("a snapshot of a v11 file sees a writer that wrote and closed (checkpointed) between two checks", async () => {
    // The whole write, close included, fits between two checks 200 ms apart.
    const changes = await snapshotSees("closed-early", "written and gone", {
      intervalMs: 200,
      closeFirst: true,
    });
    expect(changes.flatMap((c) => c.newSessionIds)).toEqual(["closed-early"]);
    expect(changes.flatMap((c) => c.messages ?? []).map((m) => m.content)).toEqual(["written and gone"]);
  });

  it("a newer agent's file (read through views) reports the agent's new sessions and displayed messages", async () => {
    const path = copyOfFixture(V30_SAMPLE_DB);
    const store = await openSessionStore(path);
    const ac = new AbortController();
    try {
      expect(store.readOnly).toBe(true);
      const feed = store
        .watchChanges({ signal: ac.signal, intervalMs: 20, includeMessages: true })
        [Symbol.asyncIterator]();
      const first = feed.next();
      // The agent writes: a new session and its first message (its own triggers run).
      const agent = new Database(path);
      agent
        .prepare("INSERT INTO sessions (id, source, started_at) VALUES ('agent-new', 'cli', 1767300000)")
        .run();
      agent
        .prepare(
          "INSERT INTO messages (session_id, role, content, timestamp, active) VALUES ('agent-new', 'user', 'from the agent', 1767300001, 1)",
        )
        .run();
      agent.close();
      const changes = [(await first).value as StoreChange];
      changes.push(...(await collect(feed, (all) => [...changes, ...all].some((c) => c.messages?.length))));
      expect(changes.flatMap((c) => c.newSessionIds)).toEqual(["agent-new"]);
      expect(changes.flatMap((c) => c.messages ?? []).map((m) => [m.session_id, m.content])).toEqual([
        ["agent-new", "from the agent"],
      ]);
    } finally {
      ac.abort();
      await store.close();
    }
  });
});
