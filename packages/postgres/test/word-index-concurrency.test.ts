import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { freshSchema, serverUrl, storesClosedAfterEach } from "./helpers/test-stores.js";
import {
  expectEachOnce,
  expectWholeLayout,
  matchingIds,
  pagedIds,
  schemaClient,
} from "./helpers/word-index.js";

// The split word index under real concurrency: separate processes appending (their stores
// sealing when they cross the mark), searching and sealing on one schema.
const run = promisify(execFile);
const url = serverUrl();
const open = storesClosedAfterEach(url);
const clients: pg.Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.end();
});

interface WorkerReport {
  role: "append" | "search" | "seal";
  ids: number[];
  errors: string[];
  searches: number;
  pageRepeats: number;
  seal: { outcome: string } | null;
}

/** Starts worker processes (see child/word-index-worker.mjs); `go()` releases them together. */
function workers(schema: string, sealEvery: number) {
  const dir = mkdtempSync(join(tmpdir(), "pg-words-"));
  const goFile = join(dir, "go");
  const stopFile = join(dir, "stop");
  const script = new URL("./child/word-index-worker.mjs", import.meta.url).pathname;
  const start = (role: WorkerReport["role"], count = 0) =>
    run(process.execPath, [script, url, schema, role, String(count), goFile, stopFile, String(sealEvery)], {
      maxBuffer: 16 * 1024 * 1024,
    }).then((r) => JSON.parse(r.stdout) as WorkerReport);
  return {
    start,
    go: async () => {
      // Each worker opens its store before waiting for the file.
      await new Promise((r) => setTimeout(r, 1_500));
      writeFileSync(goFile, "");
    },
    stop: () => writeFileSync(stopFile, ""),
  };
}

describe("the split word index under concurrency (processes)", () => {
  it("4 processes appending (a seal every 150 appends, by whichever store crosses) while 2 search: nothing lost or duplicated, every search answered", async () => {
    const schema = freshSchema();
    const store = await open({ schema, wordIndex: { sealEvery: 1_000_000, dropDelayMs: 0 } });
    const c = await schemaClient(url, schema);
    clients.push(c);
    const w = workers(schema, 150);
    const appenders = Array.from({ length: 4 }, () => w.start("append", 250));
    const searchers = Array.from({ length: 2 }, () => w.start("search"));
    await w.go();
    const appended = await Promise.all(appenders);
    w.stop();
    const searched = await Promise.all(searchers);
    for (const r of [...appended, ...searched])
      expect({ role: r.role, errors: r.errors }).toEqual({ role: r.role, errors: [] });
    for (const r of searched)
      expect({ searches: r.searches > 0, pageRepeats: r.pageRepeats }).toEqual({
        searches: true,
        pageRepeats: 0,
      });
    const ids = appended.flatMap((r) => r.ids);
    // Each appender wrote its 250, and more while no seal had switched yet (see the worker).
    for (const r of appended) expect(r.ids.length).toBeGreaterThanOrEqual(250);
    expect(new Set(ids).size).toBe(ids.length);
    // Seals ran during the appends: the registry holds sealed ranges.
    const during = await c.query("SELECT count(*)::int AS n FROM search_word_ranges WHERE hi IS NOT NULL");
    expect(during.rows[0].n).toBeGreaterThan(0);
    // A last seal also removes what a store closing mid-seal left behind.
    expect((await store.sealSearchIndex()).outcome).toMatch(/^(sealed|not-needed)$/);
    await expectWholeLayout(c);
    expectEachOnce(await pagedIds(store, "common", 97), ids);
    expectEachOnce(await pagedIds(store, "docker", 50), await matchingIds(c, "docker"));
    const stored = await c.query("SELECT id::float8 AS id FROM messages");
    expectEachOnce(
      stored.rows.map((r) => r.id),
      ids,
    );
  }, 120_000);

  it("two processes sealing at once: one seals, the other is told busy or finds nothing left; the layout stays whole", async () => {
    const schema = freshSchema();
    const store = await open({ schema, wordIndex: { sealEvery: 1_000_000, dropDelayMs: 0 } });
    await store.createSession({ id: "a", source: "cli" });
    const c = await schemaClient(url, schema);
    clients.push(c);
    const ids: number[] = [];
    for (let round = 0; round < 3; round++) {
      ids.push(
        ...(await store.appendMessages(
          Array.from({ length: 60 }, (_, i) => ({
            sessionId: "a",
            role: "user",
            content: `common r${round}x${i}`,
          })),
        )),
      );
      const w = workers(schema, 1_000_000);
      const sealers = [w.start("seal"), w.start("seal")];
      await w.go();
      // Appends go on while they seal.
      for (let i = 0; i < 20; i++)
        ids.push(
          await store.appendMessage({ sessionId: "a", role: "user", content: `common during${round}x${i}` }),
        );
      const outcomes = (await Promise.all(sealers)).map((r) => r.seal!.outcome).sort();
      expect(outcomes.filter((o) => o === "sealed").length).toBeGreaterThan(0);
      for (const o of outcomes) expect(["sealed", "busy", "not-needed"]).toContain(o);
      await expectWholeLayout(c);
      expectEachOnce(await pagedIds(store, "common", 45), ids);
    }
    // Each round's seals wait for the older transactions of other test files on the server.
  }, 180_000);
});
