import { join } from "node:path";
import { openSessionStore, type SessionStore } from "@hermes/store";
import { afterEach, describe, expect, it } from "vitest";
import { CHEAP_SEARCH_ROWS } from "../dist/reads/read-router.js";
import { seedMessages } from "./helpers/seed-messages.js";
import { tempDir } from "./helpers/temp-dir.js";

// Where a search runs with a read pool: a cheap one (its words in a few rows) on the caller's
// thread even with a worker ready; a dear one in a worker; a scan of short CJK terms in a
// worker, started for it, never on the caller's thread.

const COMMON = CHEAP_SEARCH_ROWS * 2;
const opened: SessionStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

/** A file with `COMMON` rows holding "common" (and a CJK term), 3 holding "rare". */
async function seeded(): Promise<string> {
  const path = join(tempDir("hermes-routing-"), "state.db");
  const common = Array.from({ length: COMMON }, (_, i) => `common 去桂林 ${i + 1}`);
  await seedMessages(path, [...common, "rare 1", "rare 2", "rare 3"]);
  return path;
}

async function open(path: string, readers: number): Promise<SessionStore> {
  const store = await openSessionStore({ path, readers, writer: "inline" });
  opened.push(store);
  return store;
}

describe("search routing with a read pool", () => {
  it("a cheap search is answered on the caller's thread with a worker ready; a dear one by the worker", async () => {
    const store = await open(await seeded(), 1);
    const pool = store.readPool!;
    await pool.warmUp(1);
    const before = pool.served;
    expect(await store.searchMessages("rare")).toHaveLength(3);
    expect(pool.served).toBe(before);
    expect(await store.searchMessages("common", { limit: 5 })).toHaveLength(5);
    expect(pool.served).toBe(before + 1);
    // A large page is not cheap, however rare the words.
    expect(await store.searchMessages("rare", { limit: 100 })).toHaveLength(3);
    expect(pool.served).toBe(before + 2);
  });

  it("before any worker, the first dear search runs here and starts none (a command's); the next starts one and waits for it", async () => {
    const store = await open(await seeded(), 1);
    const pool = store.readPool!;
    expect(await store.searchMessages("common", { limit: 5 })).toHaveLength(5);
    expect(pool.served).toBe(0);
    expect(pool.readyWorkers).toBe(0);
    expect(await store.searchMessages("common", { limit: 6 })).toHaveLength(6);
    expect(pool.served).toBe(1);
    expect(pool.readyWorkers).toBe(1);
  });

  it("of dear searches arriving together before any worker, one runs here and the others wait for the worker it takes", async () => {
    const store = await open(await seeded(), 1);
    const pool = store.readPool!;
    const pages = await Promise.all([5, 6, 7].map((limit) => store.searchMessages("common", { limit })));
    expect(pages.map((p) => p.length)).toEqual([5, 6, 7]);
    expect(pool.served).toBe(2);
  });

  it("a scan of short CJK terms (their index being built) waits for a worker it starts, and answers as in-thread", async () => {
    const path = await seeded();
    const store = await open(path, 1);
    const pool = store.readPool!;
    expect(pool.readyWorkers).toBe(0);
    const hits = await store.searchMessages("桂林", { limit: 10 });
    expect(pool.served).toBe(1);
    expect(pool.readyWorkers).toBe(1);
    const inThread = await open(path, 0);
    expect(hits.map((h) => h.id)).toEqual(
      (await inThread.searchMessages("桂林", { limit: 10 })).map((h) => h.id),
    );
  });
});
