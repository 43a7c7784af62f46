import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSessionStore } from "../dist/index.js";
import { tempDir } from "./helpers/temp-dir.js";

// A read-only store on a file SQLite shares (a session browser's `serve` while the agent runs)
// reads in the pool's workers too, short CJK searches included (a read-only store never catches
// its index up, so they need not run on the caller's thread).

describe("read pool of a read-only store", () => {
  it("answers reads from its workers as a read-only store on this thread does", async () => {
    const path = join(tempDir("hermes-ro-pool-"), "state.db");
    const writer = await openSessionStore({ path, readers: 0 });
    await writer.createSession({ id: "s1", source: "telegram" });
    await writer.appendMessage({ sessionId: "s1", role: "user", content: "我想去桂林 docker" });
    await writer.createSession({ id: "s2", source: "cli", parentSessionId: "s1" });
    await writer.appendMessage({ sessionId: "s2", role: "assistant", content: "docker build" });
    await writer.searchMessages("桂");

    // The writer stays open, as the agent does while it runs: SQLite shares its WAL with readers.
    const pooled = await openSessionStore({ path, readOnly: true, readers: 2 });
    const solo = await openSessionStore({ path, readOnly: true, readers: 0 });
    try {
      expect(pooled.access.readOnlyAccess).toBe("shared");
      expect(solo.readPool).toBeUndefined();
      await pooled.readPool!.warmUp(2);
      const before = pooled.readPool!.served;
      for (const read of [
        (s: typeof solo) => s.listSessionPage({ limit: 5 }),
        (s: typeof solo) => s.searchMessages("桂"),
        (s: typeof solo) => s.searchMessages("dock*"), // a prefix: never cheap, a worker's
        (s: typeof solo) => s.getLineage("s1"),
      ]) {
        expect(await read(pooled)).toEqual(await read(solo));
      }
      expect(pooled.readPool!.served - before).toBe(4);
    } finally {
      await pooled.close();
      await solo.close();
      await writer.close();
    }
  });
});
