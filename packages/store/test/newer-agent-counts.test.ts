import { openSessionStore } from "@hermes/store";
import { describe, expect, it } from "vitest";
import { copyOfFixture, SAMPLE_DB, V30_SAMPLE_DB } from "./helpers/temp-dir.js";
import { untouchedFixture } from "./helpers/untouched-fixture.js";

// usageStats counts what the listings show on a newer agent's file: its archived
// (homeassistant) and hidden (matrix) sessions, one message each, only when asked for.
describe("usageStats on a newer agent's file (schema v30) counts the listed sessions", () => {
  // Each test ends with the file exactly as the agent left it: bytes, mode, folder.
  const fx = untouchedFixture(V30_SAMPLE_DB);

  const bySource = async (o: { includeArchived?: boolean; includeHidden?: boolean } = {}) =>
    Object.fromEntries(
      (await fx.store.usageStats({ groupBy: "source", ...o })).map((r) => [
        r.group,
        [r.sessions, r.messages],
      ]),
    ) as Record<string, [number, number]>;

  it("leaves archived and hidden sessions out by default, as searchSessions does", async () => {
    const groups = await bySource();
    expect(groups.homeassistant).toBeUndefined();
    expect(groups.matrix).toBeUndefined();
    const total = Object.values(groups).reduce((n, [s]) => n + s, 0);
    const listed = await fx.store.searchSessions({ limit: 100 });
    expect(total).toBe(listed.length);
    expect(total).toBe(13);
  });

  it("brings each kind back on its own flag", async () => {
    expect((await bySource({ includeArchived: true })).homeassistant).toEqual([1, 1]);
    expect((await bySource({ includeArchived: true })).matrix).toBeUndefined();
    expect((await bySource({ includeHidden: true })).matrix).toEqual([1, 1]);
    expect((await bySource({ includeHidden: true })).homeassistant).toBeUndefined();
    const all = await fx.store.usageStats({ groupBy: "model", includeArchived: true, includeHidden: true });
    expect(all.reduce((n, r) => n + r.sessions, 0)).toBe(15);
  });

  it("checks the flags' type (INVALID_ARGUMENT), as every option", async () => {
    await expect(
      fx.store.usageStats({ groupBy: "source", includeHidden: "yes" as unknown as boolean }),
    ).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});

describe("pruneSessions' visibility options on a file this store writes (v11)", () => {
  it("are checked (INVALID_ARGUMENT before anything is deleted) and select nothing more", async () => {
    const path = copyOfFixture(SAMPLE_DB);
    const store = await openSessionStore(path);
    try {
      const count = await store.sessionCount();
      await expect(
        store.pruneSessions({ olderThanDays: 0, includeArchived: 1 as unknown as boolean }),
      ).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      expect(await store.sessionCount()).toBe(count);
      // A v11 file has no flags: with or without them, the same ended sessions go.
      const pruned = await store.pruneSessions({
        olderThanDays: 0,
        includeArchived: true,
        includeHidden: true,
      });
      expect(pruned).toBeGreaterThan(0);
      expect(await store.sessionCount()).toBe(count - pruned);
    } finally {
      await store.close();
    }
  });
});
