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
  fc.record({ kind: fc.constant("insert" as const), text: fc.constantFrom(...TEXTS) }),
  fc.record({ kind: fc.constant("update" as const), at: fc.nat(), text: fc.constantFrom(...TEXTS) }),
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

describe("short-CJK index read while behind", () => {
  it("300 generated queues and queries: the same hits, in the same order, as the scan", () => {
    fc.assert(
      fc.property(
        fc.array(change, { minLength: 1, maxLength: 12 }),
        fc.array(queryOf, { minLength: 3, maxLength: 3 }),
        (changes, queries) => {
          const db = searchDb(TEXTS.map((content) => ({ content })));
          const exec = recordingExecutor(db);
          db.transaction(() => {
            createCjkIndex(exec);
            while (backfillCjkChunk(exec, 100).remaining > 0);
            while (drainCjkQueue(exec, 100) > 0);
          })();
          let t = 1_800_000_000;
          for (const c of changes) {
            const ids = (db.prepare("SELECT id FROM messages ORDER BY id").all() as { id: number }[]).map(
              (r) => r.id,
            );
            const pick = c.kind === "insert" || ids.length === 0 ? undefined : ids[c.at % ids.length];
            if (c.kind === "insert")
              db.prepare(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s-cli', 'user', ?, ?)",
              ).run(c.text, ++t);
            else if (pick !== undefined && c.kind === "update")
              db.prepare("UPDATE messages SET content = ? WHERE id = ?").run(c.text, pick);
            else if (pick !== undefined) db.prepare("DELETE FROM messages WHERE id = ?").run(pick);
          }
          const queued = cjkQueuedIds(exec, 1000);
          expect(queued).not.toBeNull();
          for (const q of queries) {
            const plan: SearchPlan = planSearch(q);
            const hits = (p: SearchPlan) => runSearch(exec, p, ALL).map((h) => [h.id, h.snippet]);
            expect(hits(withQueuedCjkRows(plan, queued ?? [])), q).toEqual(hits(withoutShortCjkIndex(plan)));
          }
          expect(exec.errors).toEqual([]);
          db.close();
        },
      ),
      { numRuns: 300 },
    );
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
