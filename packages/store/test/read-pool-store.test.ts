import { join } from "node:path";
import { AbortedError, BackendError, InvalidArgumentError } from "@hermes/core";
import { describe, expect, it } from "vitest";
import { openSessionStore, type SessionStore } from "../dist/index.js";
import { tempDir } from "./helpers/temp-dir.js";

/** A store whose pool has `n` warm workers, so every read below goes to a worker. */
async function pooledStore(n = 2): Promise<SessionStore> {
  const store = await openSessionStore({ path: join(tempDir("hermes-pool-"), "state.db"), readers: n });
  await store.readPool!.warmUp(n);
  expect(store.readPool!.readyWorkers).toBe(n);
  return store;
}

const N = 5;
const group = (sessionId: string, g: number) =>
  Array.from({ length: N }, (_, i) => ({ sessionId, role: "user", content: `group ${g} message ${i}` }));

describe("read pool wired into the store", () => {
  it("readers: 0 has no pool; the default sizes it to the machine; a bad value is INVALID_ARGUMENT", async () => {
    const dir = tempDir("hermes-pool-");
    const inThread = await openSessionStore({ path: join(dir, "a.db"), readers: 0 });
    const pooled = await openSessionStore({ path: join(dir, "b.db") });
    try {
      expect(inThread.readPool).toBeUndefined();
      expect(pooled.readPool!.size).toBeGreaterThanOrEqual(1);
      expect(pooled.readPool!.size).toBeLessThanOrEqual(4);
      await expect(openSessionStore({ path: join(dir, "c.db"), readers: -1 })).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
    } finally {
      await inThread.close();
      await pooled.close();
    }
  });

  it("an in-thread stream starts no worker while it runs; its time counts once it ends", async () => {
    const store = await openSessionStore({ path: join(tempDir("hermes-pool-"), "state.db"), readers: 1 });
    try {
      await store.createSession({ id: "s1", source: "cli" });
      const body = "x".repeat(2000);
      await store.appendMessages(
        Array.from({ length: 3000 }, (_, i) => ({ sessionId: "s1", role: "user", content: `${i} ${body}` })),
      );
      const pool = store.readPool!;
      // No worker is ready, so the export runs in-thread to its end, with no worker started
      // beside it (one it could not use: a CLI export would pay a thread for nothing) ...
      const started = performance.now();
      let messages = 0;
      for await (const s of store.exportStream()) {
        messages += s.messages.length;
        expect(pool.workerAt(0)).toBeUndefined();
      }
      expect(messages).toBe(3000);
      expect(performance.now() - started).toBeGreaterThan(20);
      // ... and then its time starts the first worker for later reads.
      expect(pool.workerAt(0)).toBeDefined();
    } finally {
      await store.close();
    }
  });

  it("reads in workers answer as in-thread reads do, and typed errors keep their class", async () => {
    const store = await pooledStore();
    try {
      await store.createSession({ id: "s1", source: "cli" });
      await store.appendMessages(group("s1", 0));
      await store.setSessionTitle("s1", "Deploy notes");
      const before = store.readPool!.served;
      expect(await store.getSession("s1")).toMatchObject({
        id: "s1",
        message_count: N,
        title: "Deploy notes",
      });
      expect((await store.getMessages("s1")).map((m) => m.content)).toEqual(
        group("s1", 0).map((m) => m.content),
      );
      // A prefix search is never answered in-thread as cheap (read-router.ts): a worker's.
      expect(await store.searchMessages("messag*")).toHaveLength(N);
      expect(await store.resolveSessionByTitle("Deploy notes")).toBe("s1");
      expect((await store.listSessionsRich({ limit: 1, source: "cli" }))[0]?.id).toBe("s1");
      expect((await store.listSessionPage({ limit: 1 })).sessions[0]?.id).toBe("s1");
      expect((await store.usageStats({ groupBy: "source" }))[0]).toMatchObject({ group: "cli", messages: N });
      expect(await store.exportSessionMarkdown("s1")).toContain("group 0 message 4");
      // Eight reads, seven replies of a worker: getSession, a key lookup, is answered in-thread
      // (inline-reads.test.ts); a filtered listing is not a cheap first page.
      expect(store.readPool!.served - before).toBe(7);
      const refused = store.listSessionsRich({ limit: -1, source: "cli" }); // not a cheap page: a worker's error
      await expect(refused).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(refused).rejects.toMatchObject({ code: "INVALID_ARGUMENT", argument: "limit" });
    } finally {
      await store.close();
    }
  });

  it("read-your-writes and no half group: readers in workers see whole groups of N, counters matching rows", async () => {
    const store = await pooledStore();
    try {
      await store.createSession({ id: "s1", source: "cli" });
      let written = 0;
      let writing = true;
      const writer = (async () => {
        for (let g = 0; g < 40; g++) {
          // Several groups in flight at once share commits (savepoints in one transaction).
          await Promise.all([
            store.appendMessages(group("s1", 2 * g)),
            store.appendMessages(group("s1", 2 * g + 1)),
          ]);
          written += 2 * N;
          // Read-your-writes: issued after the write resolved, a worker's read counts it.
          expect(await store.messageCount({ sessionId: "s1" })).toBeGreaterThanOrEqual(written);
        }
        writing = false;
      })();
      const reader = async () => {
        let reads = 0;
        while (writing) {
          const snapshot = await store.exportSession("s1");
          expect(snapshot!.messages.length % N).toBe(0);
          expect(snapshot!.message_count).toBe(snapshot!.messages.length);
          expect((await store.messageCount({ sessionId: "s1" })) % N).toBe(0);
          reads++;
        }
        return reads;
      };
      const reads = await Promise.all([reader(), reader(), reader(), writer]);
      expect(reads[0]! + reads[1]! + reads[2]!).toBeGreaterThan(0);
      expect(await store.messageCount({ sessionId: "s1" })).toBe(80 * N);
    } finally {
      await store.close();
    }
  });

  it("an aborted signal rejects with ABORTED at once, in-thread and in the pool", async () => {
    const dir = tempDir("hermes-pool-");
    for (const readers of [0, 2]) {
      const store = await openSessionStore({ path: join(dir, `r${readers}.db`), readers });
      await store.readPool?.warmUp();
      try {
        const signal = AbortSignal.abort();
        await expect(store.searchMessages("docker", { signal })).rejects.toBeInstanceOf(AbortedError);
        await expect(store.usageStats({ groupBy: "day", signal })).rejects.toMatchObject({ code: "ABORTED" });
        await expect(store.exportStream({ signal })[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(
          AbortedError,
        );
        await expect(store.exportJsonl(join(dir, `r${readers}.jsonl`), { signal })).rejects.toBeInstanceOf(
          AbortedError,
        );
        await expect(
          store.iterMessages("s1", { signal })[Symbol.asyncIterator]().next(),
        ).rejects.toBeInstanceOf(AbortedError);
        await expect(store.searchMessages("docker", { signal: "no" as never })).rejects.toBeInstanceOf(
          InvalidArgumentError,
        );
      } finally {
        await store.close();
      }
    }
  });

  it("aborting a running read ends its worker: only that call rejects, the others and later reads answer", async () => {
    const store = await pooledStore(2);
    try {
      await store.createSession({ id: "s1", source: "cli" });
      await store.appendMessages(group("s1", 0));
      const ac = new AbortController();
      const doomed = store.searchMessages("messag*", { signal: ac.signal }); // worker 1 (a prefix: never cheap)
      const other = store.getMessages("s1"); // worker 2
      await Promise.resolve();
      ac.abort();
      await expect(doomed).rejects.toBeInstanceOf(AbortedError);
      await expect(doomed).rejects.toMatchObject({ code: "ABORTED" });
      expect(await other).toHaveLength(N);
      expect(await store.searchMessages("message")).toHaveLength(N);
      expect(await store.sessionCount()).toBe(1);
    } finally {
      await store.close();
    }
  });

  it("streams come from a worker batch by batch (back-pressure), abort mid-stream, and fail alone when their worker dies", async () => {
    const store = await pooledStore(2);
    try {
      await store.createSession({ id: "s1", source: "cli" });
      for (let g = 0; g < 600; g += 100) {
        await store.appendMessages(Array.from({ length: 100 }, (_, i) => group("s1", g + i)).flat());
      }
      const total = 600 * N;
      // Back-pressure: after 10 rows and a pause, the worker has sent the opening and at most
      // two batches (the one being read and one ahead), not the whole session.
      const before = store.readPool!.served;
      const rows: number[] = [];
      const it = store.iterMessages("s1")[Symbol.asyncIterator]();
      for (let i = 0; i < 10; i++) rows.push(((await it.next()).value as { id: number }).id);
      await new Promise((r) => setTimeout(r, 100));
      expect(store.readPool!.served - before).toBeLessThanOrEqual(3);
      for (let step = await it.next(); !step.done; step = await it.next()) rows.push(step.value.id);
      expect(rows).toHaveLength(total);
      expect(rows).toEqual((await store.getMessages("s1")).map((m) => m.id));

      const exported = [];
      for await (const s of store.exportStream()) exported.push(s);
      expect(exported.map((s) => s.messages.length)).toEqual([total]);

      const ac = new AbortController();
      const aborted = store.iterMessages("s1", { signal: ac.signal })[Symbol.asyncIterator]();
      expect((await aborted.next()).done).toBe(false);
      ac.abort();
      await expect(aborted.next()).rejects.toBeInstanceOf(AbortedError);

      // The stream's worker is killed between two batches: its next step fails with
      // BACKEND_ERROR, and later reads are answered (by a new worker).
      const killed = store.iterMessages("s1", { pageSize: 100 })[Symbol.asyncIterator]();
      expect((await killed.next()).done).toBe(false);
      const workers = [0, 1].map((i) => store.readPool!.workerAt(i)).filter((w) => w !== undefined);
      await Promise.all(workers.map((w) => w.terminate()));
      const drained = (async () => {
        for (let step = await killed.next(); !step.done; step = await killed.next());
      })();
      await expect(drained).rejects.toBeInstanceOf(BackendError);
      expect(await store.messageCount({ sessionId: "s1" })).toBe(total);
    } finally {
      await store.close();
    }
  });
});
