import { existsSync } from "node:fs";
import { join } from "node:path";
import { InvalidArgumentError } from "@hermes/core";
import { describe, expect, it } from "vitest";
import { openSessionStore } from "../dist/index.js";
import { tempDir } from "./helpers/temp-dir.js";

// `warmReaders: true` (what `hermes-sessions serve` opens with): the open resolves with every
// read worker ready, so a server's first reads never run on its thread while one loads.
// read-pool-close.test.ts checks in a child process that such a store's close leaves no thread.

describe("warmReaders", () => {
  it("starts every worker before the open resolves; the first search is a worker's; close ends them", async () => {
    const path = join(tempDir("hermes-warm-"), "state.db");
    const writer = await openSessionStore({ path, readers: 0 });
    await writer.createSession({ id: "s1", source: "cli" });
    await writer.appendMessage({ sessionId: "s1", role: "user", content: "docker compose up" });
    const store = await openSessionStore({ path, readers: 2, warmReaders: true });
    try {
      const pool = store.readPool!;
      expect(pool.readyWorkers).toBe(2);
      const workers = [pool.workerAt(0), pool.workerAt(1)];
      expect(workers.map((w) => (w?.threadId ?? -1) > 0)).toEqual([true, true]);
      expect(pool.served).toBe(0);
      // A prefix search: never "cheap" (read-router.ts), so a worker's even on a tiny file.
      expect((await store.searchMessages("dock*")).map((h) => h.session_id)).toEqual(["s1"]);
      expect(pool.served).toBe(1);
      await store.close();
      // A worker's threadId is -1 once its thread has ended.
      expect(workers.map((w) => w?.threadId)).toEqual([-1, -1]);
    } finally {
      await store.close();
      await writer.close();
    }
  });

  it("a read-only store on a file the agent has open starts its workers too", async () => {
    const path = join(tempDir("hermes-warm-"), "state.db");
    const agent = await openSessionStore({ path, readers: 0 });
    await agent.createSession({ id: "s1", source: "telegram" });
    await agent.appendMessage({ sessionId: "s1", role: "user", content: "我想去桂林" });
    const served = await openSessionStore({ path, readOnly: true, readers: 2, warmReaders: true });
    try {
      expect(served.access.readOnlyAccess).toBe("shared");
      expect(served.readPool!.readyWorkers).toBe(2);
      expect((await served.searchMessages("桂林")).map((h) => h.session_id)).toEqual(["s1"]);
      expect(served.readPool!.served).toBe(1);
    } finally {
      await served.close();
      await agent.close();
    }
  });

  it("does nothing without a pool: readers 0, a read-only snapshot", async () => {
    const path = join(tempDir("hermes-warm-"), "state.db");
    const solo = await openSessionStore({ path, readers: 0, warmReaders: true });
    await solo.createSession({ id: "s1", source: "cli" });
    await solo.appendMessage({ sessionId: "s1", role: "user", content: "docker" });
    try {
      expect(solo.readPool).toBeUndefined();
      expect(await solo.searchMessages("docker")).toHaveLength(1);
    } finally {
      await solo.close();
    }
    // No process has the file open (no -wal): a read-only store reads it from memory, in-thread.
    const snapshot = await openSessionStore({ path, readOnly: true, readers: 2, warmReaders: true });
    try {
      expect(snapshot.access.readOnlyAccess).toBe("snapshot");
      expect(snapshot.readPool).toBeUndefined();
      expect(await snapshot.searchMessages("docker")).toHaveLength(1);
    } finally {
      await snapshot.close();
    }
  });

  it("a value that is not a boolean is INVALID_ARGUMENT, before anything is created", async () => {
    const path = join(tempDir("hermes-warm-"), "state.db");
    await expect(openSessionStore({ path, warmReaders: 2 as unknown as boolean })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(existsSync(path)).toBe(false);
  });
});
