import {
  cjkQueuedIds,
  planSearch,
  runSearch,
  type SearchPlan,
  withoutShortCjkIndex,
  withQueuedCjkRows,
} from "@hermes/search";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { backfillCjkChunk, createCjkIndex, drainCjkQueue } from "../dist/cjk-index/cjk-index.js";
import { recordingExecutor, searchDb } from "./helpers/search-db.js";

// Reading a short-CJK index that is behind (`withQueuedCjkRows`): the index for every message
// not queued, `LIKE` on the queued rows. It must give exactly what the reference's scan gives,
// in the same order, whatever the queue holds: rows inserted, changed either way, deleted.

const TEXTS = [
  "桂林山水甲天下",
  "广西 Guangxi 桂林 Guilin",
  "龙的传人",
  "龙井茶和桂花",
  "记忆断裂问题",
  "AI 记忆 and 龙",
  "plain text only",
  "测试数据",
  "桂",
  null,
];
const TERMS = ["桂林", "桂", "龙", "记忆", "测试", "AI", "广西", "山水", "茶"];

const change = fc.oneof(
  fc.record({
    kind: fc.constant("insert" as const),
    text: fc.constantFrom(...TEXTS),
    // Newest, or among the old rows (ids then run against time).
    newest: fc.boolean(),
    back: fc.nat({ max: 500 }),
  }),
  fc.record({ kind: fc.constant("update" as const), at: fc.nat(), text: fc.constantFrom(...TEXTS) }),
  fc.record({ kind: fc.constant("restamp" as const), at: fc.nat(), back: fc.nat({ max: 500 }) }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat() }),
);
const queryOf = fc
  .array(fc.tuple(fc.constantFrom(...TERMS), fc.constantFrom(" ", " OR ", " NOT ", " AND ")), {
    minLength: 1,
    maxLength: 3,
  })
  .map((parts) =>
    parts
      .map(([term, op], i) => (i < parts.length - 1 ? term + op : term))
      .join("")
      .trim(),
  );

const ALL = { limit: 1000, offset: 0, context: false };

/** 400 messages (the texts, 40 times, in time order) with the short-CJK index built and current. */
function indexedDb() {
  const db = searchDb(Array.from({ length: 40 }, () => TEXTS.map((content) => ({ content }))).flat());
  const exec = recordingExecutor(db);
  db.transaction(() => {
    createCjkIndex(exec);
    while (backfillCjkChunk(exec, 100).remaining > 0);
    while (drainCjkQueue(exec, 100) > 0);
  })();
  return { db, exec };
}

describe("short-CJK index read while behind", () => {
  it("200 generated queues: every query's pages, the same hits in the same order as the scan", () => {
    fc.assert(
      fc.property(
        fc.array(change, { maxLength: 12 }),
        fc.array(change, { minLength: 1, maxLength: 12 }),
        fc.array(queryOf, { minLength: 3, maxLength: 3 }),
        (applied, changes, queries) => {
          const { db, exec } = indexedDb();
          const newest = () =>
            (db.prepare("SELECT max(timestamp) AS t FROM messages").get() as { t: number }).t;
          // The first changes reach the index (ids then run against time among indexed rows too),
          // the others stay queued.
          for (const [i, c] of [...applied, ...changes].entries()) {
            if (i === applied.length) db.transaction(() => void drainCjkQueue(exec, 1000))();
            const ids = (db.prepare("SELECT id FROM messages ORDER BY id").all() as { id: number }[]).map(
              (r) => r.id,
            );
            if (c.kind === "insert") {
              db.prepare(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s-cli', 'user', ?, ?)",
              ).run(c.text, c.newest ? newest() + 1 : newest() - c.back);
              continue;
            }
            // Mostly among the newest rows, which the early stop reads, so a row is often changed twice.
            const pick = c.at % 3 === 0 ? ids[c.at % ids.length] : ids[ids.length - 1 - (c.at % 40)];
            if (pick === undefined) continue;
            if (c.kind === "update")
              db.prepare("UPDATE messages SET content = ? WHERE id = ?").run(c.text, pick);
            else if (c.kind === "restamp")
              db.prepare("UPDATE messages SET timestamp = ? WHERE id = ?").run(newest() - c.back, pick);
            else db.prepare("DELETE FROM messages WHERE id = ?").run(pick);
          }
          const queued = cjkQueuedIds(exec, 1000);
          expect(queued).not.toBeNull();
          for (const q of queries) {
            const plan: SearchPlan = planSearch(q);
            for (const page of [
              ALL,
              { limit: 5, offset: 0 },
              { limit: 7, offset: 30 },
              { limit: 3, offset: 150 },
            ]) {
              const hits = (p: SearchPlan) =>
                runSearch(exec, p, { ...page, context: false }).map((h) => [h.id, h.snippet]);
              expect(hits(withQueuedCjkRows(plan, queued ?? [])), q).toEqual(
                hits(withoutShortCjkIndex(plan)),
              );
            }
          }
          expect(exec.errors).toEqual([]);
          db.close();
        },
      ),
      { numRuns: 200 },
    );
  });

  it("a queued row's stale entry does not count toward the newest-first early stop", () => {
    const { db, exec } = indexedDb();
    const newest = () => (db.prepare("SELECT max(timestamp) AS t FROM messages").get() as { t: number }).t;
    // The oldest row becomes the newest match: every block bound from there up is its timestamp.
    db.prepare("UPDATE messages SET timestamp = ? WHERE id = 1").run(newest() + 10);
    // A newer row matches in the index (applied), then stops matching (queued, entry stale).
    const stale = db
      .prepare(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s-cli', 'user', '桂林', ?)",
      )
      .run(newest() + 10).lastInsertRowid;
    db.transaction(() => void drainCjkQueue(exec, 1000))();
    db.prepare("UPDATE messages SET content = 'plain text only' WHERE id = ?").run(stale);
    const queued = cjkQueuedIds(exec, 1000);
    expect(queued).toEqual([Number(stale)]);
    const plan = planSearch("桂");
    const ids = (p: SearchPlan, limit: number) =>
      runSearch(exec, p, { limit, offset: 0, context: false }).map((h) => h.id);
    // Counting the stale entry (newest of all) would stop after the first read, before row 1.
    expect(ids(withQueuedCjkRows(plan, queued ?? []), 1)).toEqual([1]);
    expect(ids(withQueuedCjkRows(plan, queued ?? []), 5)).toEqual(ids(withoutShortCjkIndex(plan), 5));
    expect(exec.errors).toEqual([]);
    db.close();
  });

  it("no read around an index whose backfill is not complete, or a queue past the bound", () => {
    const db = searchDb(TEXTS.map((content) => ({ content })));
    const exec = recordingExecutor(db);
    expect(cjkQueuedIds(exec, 10)).toBeNull(); // no index
    createCjkIndex(exec);
    expect(cjkQueuedIds(exec, 10)).toBeNull(); // backfill pending
    while (backfillCjkChunk(exec, 100).remaining > 0);
    while (drainCjkQueue(exec, 100) > 0);
    expect(cjkQueuedIds(exec, 10)).toEqual([]);
    const add = db.prepare(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s-cli', 'user', ?, ?)",
    );
    for (let i = 0; i < 11; i++) add.run(`第${i}条`, 1_900_000_000 + i);
    expect(cjkQueuedIds(exec, 11)).toHaveLength(11);
    expect(cjkQueuedIds(exec, 10)).toBeNull();
    db.close();
  });
});
