import { CORE_INDEXES, CORE_TABLES } from "@hermes/schema";
import {
  cjkOrderUsable,
  FTS_TABLE,
  ftsTableScript,
  newestMatchCandidates,
  planSearch,
  runSearch,
  TRIGRAM_TABLE,
} from "@hermes/search";
import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cjkGramToken } from "../dist/cjk-index/cjk-grams.js";
import { backfillCjkChunk, CJK_INDEX_TABLE, createCjkIndex } from "../dist/cjk-index/cjk-index.js";
import { type ReferenceFilters, referenceSearch } from "./helpers/reference-search.js";
import { catchUp, recordingExecutor } from "./helpers/search-db.js";

// Short CJK terms come newest first, as the reference's `LIKE … ORDER BY m.timestamp DESC`
// returns them, ties included; the early stop on the timestamp blocks must never change that.
// Oracle: the reference's own LIKE query on the same file.

const SOURCES = ["cli", "telegram", "discord", "slack"];
const ROLES = ["user", "assistant", "tool"];
const TEXTS = ["龙", "桂林", "龙的传人", "广西桂林", "hello", "docker 龙", "桂", "林龙", "world", "测试"];

interface Row {
  id: number;
  session: number;
  role: string;
  text: string;
  timestamp: number | string;
}

/** A v11 file in memory with the reference's FTS tables and triggers, `rows` inserted with explicit ids. */
function fileWith(sessions: readonly string[], rows: readonly Row[]): Database.Database {
  const db = new Database(":memory:");
  for (const sql of Object.values(CORE_TABLES)) db.exec(sql);
  for (const sql of Object.values(CORE_INDEXES)) db.exec(sql);
  for (const sql of [...ftsTableScript(FTS_TABLE), ...ftsTableScript(TRIGRAM_TABLE)]) db.exec(sql);
  const addSession = db.prepare("INSERT INTO sessions (id, source, model, started_at) VALUES (?, ?, 'm', ?)");
  sessions.forEach((source, i) => {
    addSession.run(`s${i}`, source, 1_000 + i);
  });
  const add = db.prepare(
    "INSERT INTO messages (id, session_id, role, content, timestamp) VALUES (?, ?, ?, ?, ?)",
  );
  for (const r of rows) add.run(r.id, `s${r.session}`, r.role, r.text, r.timestamp);
  return db;
}

interface Query extends ReferenceFilters {
  q: string;
}

function ours(db: Database.Database, query: Query): Array<{ id: number; snippet: string }> {
  const hits = runSearch(recordingExecutor(db), planSearch(query.q), {
    sourceFilter: query.sourceFilter,
    excludeSources: query.excludeSources,
    roleFilter: query.roleFilter,
    limit: query.limit ?? 20,
    offset: query.offset ?? 0,
    context: false,
  });
  return hits.map((h) => ({ id: h.id, snippet: h.snippet }));
}

// Ids that grow with time (as in a real file) are the case the early stop is for; the others
// must fall back to reading or sorting every match and give the same answer.
const timestamps = fc.constantFrom(
  "distinct",
  "jitter",
  "jitter",
  "monotonic",
  "shuffled",
  "ties",
  "few",
  "odd",
);

/** A file: ids with gaps (so a few hundred rows span many 256-id blocks), timestamps of one kind. */
const corpus = fc
  .record({
    kind: timestamps,
    sessions: fc.array(fc.constantFrom(...SOURCES), { minLength: 1, maxLength: 6 }),
    rows: fc.array(
      fc.record({
        gap: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 700 })),
        session: fc.nat(),
        role: fc.constantFrom(...ROLES),
        text: fc.constantFrom(...TEXTS),
        t: fc.integer({ min: 0, max: 1_000_000 }),
      }),
      // Enough rows that the first read (64 matches) is often not all of them.
      { minLength: 1, maxLength: 500, size: "max" },
    ),
  })
  .map(({ kind, sessions, rows }) => {
    let id = 0;
    const out: Row[] = rows.map((r, i) => {
      id += r.gap;
      let timestamp: number | string;
      switch (kind) {
        case "distinct":
          timestamp = 1_700_000_000 + i + r.t / 2_000_000;
          break;
        case "jitter":
          // Interleaved sessions: stamped up to a minute out of id order.
          timestamp = 1_700_000_000 + i * 10 + (r.t % 60);
          break;
        case "shuffled":
          timestamp = 1_700_000_000 + r.t / 7;
          break;
        case "ties":
          timestamp = 1_700_000_000 + (r.t % 4);
          break;
        case "few":
          timestamp = 1_700_000_000 + (r.t % 40) * 0.5;
          break;
        case "monotonic":
          // Non-decreasing with plenty of equal neighbours, as clock ticks in a busy file.
          timestamp = 1_700_000_000 + Math.floor(i / 3);
          break;
        default:
          // Integers, reals, and now and then text: SQLite orders text above every number.
          timestamp = r.t % 17 === 0 ? `t${r.t % 3}` : r.t % 2 === 0 ? r.t % 50 : (r.t % 50) + 0.5;
      }
      return { id, session: r.session % sessions.length, role: r.role, text: r.text, timestamp };
    });
    return { sessions, rows: out };
  });

const query = fc.record(
  {
    q: fc.constantFrom("龙", "桂林", "林", "桂", "龙的", "传人", "测"),
    sourceFilter: fc.uniqueArray(fc.constantFrom(...SOURCES), { minLength: 1, maxLength: 3 }),
    excludeSources: fc.uniqueArray(fc.constantFrom(...SOURCES), { minLength: 1, maxLength: 2 }),
    roleFilter: fc.uniqueArray(fc.constantFrom(...ROLES), { minLength: 1, maxLength: 2 }),
    limit: fc.oneof(
      { weight: 2, arbitrary: fc.integer({ min: 0, max: 25 }) },
      { weight: 3, arbitrary: fc.constant(20) },
      { weight: 1, arbitrary: fc.constant(1000) },
    ),
    offset: fc.oneof(
      { weight: 3, arbitrary: fc.constant(0) },
      { weight: 2, arbitrary: fc.integer({ min: 0, max: 120 }) },
    ),
  },
  { requiredKeys: ["q", "limit", "offset"] },
);

describe("short CJK terms newest first: exactly the reference's LIKE scan", () => {
  it("random files (shuffled timestamps, ties, mixed types) and queries with filters and paging", () => {
    let proven = 0;
    fc.assert(
      fc.property(corpus, fc.array(query, { minLength: 1, maxLength: 8 }), (file, queriesOfFile) => {
        const db = fileWith(file.sessions, file.rows);
        try {
          catchUp(db);
          const exec = recordingExecutor(db);
          expect(cjkOrderUsable(exec)).toBe(true);
          for (const qy of queriesOfFile) {
            expect(ours(db, qy)).toEqual(referenceSearch(db, qy.q, qy));
            const ids = newestMatchCandidates(
              exec,
              CJK_INDEX_TABLE,
              cjkGramToken(qy.q),
              qy,
              (qy.limit ?? 20) + (qy.offset ?? 0),
            );
            const all = db
              .prepare(`SELECT count(*) FROM ${CJK_INDEX_TABLE} WHERE ${CJK_INDEX_TABLE} MATCH ?`)
              .pluck()
              .get(cjkGramToken(qy.q)) as number;
            if (ids !== null && ids.length < all) proven++;
          }
        } finally {
          db.close();
        }
      }),
      { numRuns: 300, seed: 20261130, endOnFailure: true },
    );
    // The early stop was taken (fewer ids than all matches) on enough queries to matter: a
    // proof that admits one candidate too many (`>=` for `>`) fails this test.
    expect(proven).toBeGreaterThanOrEqual(20);
  });

  it("stays exact after raw updates (timestamps up and down, texts), deletes and inserts by another connection", () => {
    fc.assert(
      fc.property(
        corpus,
        fc.array(
          fc.record({
            op: fc.constantFrom("restamp", "text", "delete", "insert"),
            pick: fc.nat(),
            t: fc.integer({ min: -1_000, max: 2_000_000 }),
            text: fc.constantFrom(...TEXTS),
          }),
          { maxLength: 30 },
        ),
        query,
        (file, ops, qy) => {
          const db = fileWith(file.sessions, file.rows);
          try {
            catchUp(db);
            // The reference's statements only (our triggers queue them; nothing else of ours runs).
            for (const op of ops) {
              const ids = db.prepare("SELECT id FROM messages ORDER BY id").pluck().all() as number[];
              const id = ids.length === 0 ? undefined : ids[op.pick % ids.length];
              if (op.op === "insert" || id === undefined) {
                db.prepare(
                  "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s0', 'user', ?, ?)",
                ).run(op.text, 1_700_000_000 + op.t / 3);
              } else if (op.op === "restamp") {
                db.prepare("UPDATE messages SET timestamp = ? WHERE id = ?").run(
                  1_700_000_000 + op.t / 3,
                  id,
                );
              } else if (op.op === "text") {
                db.prepare("UPDATE messages SET content = ? WHERE id = ?").run(op.text, id);
              } else {
                db.prepare("DELETE FROM messages WHERE id = ?").run(id);
              }
            }
            const exec = recordingExecutor(db);
            // Queued changes not applied yet: the bound is not trusted (the store catches up first).
            if (ops.length > 0) expect(cjkOrderUsable(exec)).toBe(false);
            catchUp(db);
            expect(cjkOrderUsable(exec)).toBe(true);
            expect(ours(db, qy)).toEqual(referenceSearch(db, qy.q, qy));
          } finally {
            db.close();
          }
        },
      ),
      { numRuns: 150, seed: 7, endOnFailure: true },
    );
  });

  it("ties across sessions under a source filter come in the reference's order (source, session, id descending)", () => {
    // Two sources, sessions inserted out of source order, every message at the same second.
    const rows: Row[] = [];
    let id = 0;
    for (let i = 0; i < 90; i++)
      rows.push({ id: ++id, session: i % 5, role: "user", text: "龙", timestamp: 5 });
    const db = fileWith(["telegram", "cli", "telegram", "cli", "discord"], rows);
    try {
      catchUp(db);
      for (const sourceFilter of [["telegram"], ["telegram", "cli"], ["discord", "cli", "telegram"]]) {
        for (const [limit, offset] of [
          [20, 0],
          [7, 13],
          [100, 0],
        ] as const) {
          const qy = { q: "龙", sourceFilter, limit, offset };
          const expected = referenceSearch(db, qy.q, qy);
          expect(expected.length).toBeGreaterThan(0);
          expect(ours(db, qy)).toEqual(expected);
        }
      }
      // Without a source filter: ties by id, ascending.
      expect(ours(db, { q: "龙", limit: 10, offset: 0 }).map((h) => h.id)).toEqual([
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
      ]);
    } finally {
      db.close();
    }
  });

  it("a file whose ids grow with time stops after one short read, with filters, paging and ties", () => {
    const rows: Row[] = [];
    for (let i = 1; i <= 20_000; i++) {
      rows.push({
        id: i,
        session: i % 4,
        role: ROLES[i % 3] as string,
        text: i % 9 === 0 ? "桂林山水" : i % 5 === 0 ? "龙" : "hello world",
        // Sessions interleave: stamped up to a minute out of id order, whole seconds (ties).
        timestamp: 1_700_000_000 + Math.floor(i / 2) * 10 + ((i * 7919) % 60),
      });
    }
    const db = fileWith(SOURCES, rows);
    try {
      catchUp(db);
      const exec = recordingExecutor(db);
      const first = newestMatchCandidates(exec, CJK_INDEX_TABLE, cjkGramToken("桂林"), {}, 20);
      expect(first?.length).toBe(80);
      const queries: Query[] = [
        { q: "桂林", limit: 20, offset: 0 },
        { q: "龙", limit: 20, offset: 0 },
        { q: "龙", limit: 50, offset: 130 },
        { q: "龙", sourceFilter: ["telegram", "cli"], limit: 20, offset: 0 },
        { q: "桂林", roleFilter: ["assistant"], limit: 20, offset: 5 },
        { q: "龙", excludeSources: ["discord"], roleFilter: ["tool", "user"], limit: 20, offset: 0 },
        { q: "龙", sourceFilter: ["slack"], roleFilter: ["user"], limit: 30, offset: 0 },
      ];
      for (const qy of queries) {
        const ids = newestMatchCandidates(
          exec,
          CJK_INDEX_TABLE,
          cjkGramToken(qy.q),
          qy,
          (qy.limit ?? 20) + (qy.offset ?? 0),
        );
        // Proven from a few hundred candidates out of thousands of matches.
        expect(ids).not.toBeNull();
        expect(ids?.length).toBeLessThanOrEqual(4_096);
        expect(ours(db, qy)).toEqual(referenceSearch(db, qy.q, qy));
      }
    } finally {
      db.close();
    }
  });

  it("a trigram term in CJK mode (Agent通信) uses the blocks too, but only once the index's backfill is complete", () => {
    const rows: Row[] = [];
    for (let i = 1; i <= 3_000; i++)
      rows.push({
        id: i,
        session: i % 3,
        role: "user",
        text: i % 4 === 0 ? "和 Agent通信 的记录" : "agent通信协议",
        timestamp: 1_700_000_000 + i * 10 + ((i * 7919) % 60),
      });
    const db = fileWith(["cli", "telegram", "discord"], rows);
    try {
      const exec = recordingExecutor(db);
      const plan = planSearch("Agent通信");
      expect(plan).toMatchObject({ kind: "substring", rows: { kind: "match", index: TRIGRAM_TABLE } });
      const match = plan.kind === "substring" && plan.rows.kind === "match" ? plan.rows.match : "";
      // Index created, backfill one chunk in: blocks cover only the first ids.
      db.transaction(() => {
        createCjkIndex(exec);
        backfillCjkChunk(exec, 500);
      })();
      expect(cjkOrderUsable(exec)).toBe(false);
      expect(newestMatchCandidates(exec, TRIGRAM_TABLE, match, {}, 20)).toBeNull();
      const qy = { q: "Agent通信", limit: 20, offset: 0 };
      expect(ours(db, qy)).toEqual(referenceSearch(db, qy.q, qy));
      catchUp(db);
      expect(cjkOrderUsable(exec)).toBe(true);
      // Every message matches: the first 80 lie inside the newest 256-id block, whose bound is
      // the newest timestamp, so the proof needs the second read (640 of 3,000).
      expect(newestMatchCandidates(exec, TRIGRAM_TABLE, match, {}, 20)?.length).toBe(640);
      expect(ours(db, qy)).toEqual(referenceSearch(db, qy.q, qy));
      expect(ours(db, { ...qy, sourceFilter: ["telegram"], offset: 7 })).toEqual(
        referenceSearch(db, qy.q, { ...qy, sourceFilter: ["telegram"], offset: 7 }),
      );
    } finally {
      db.close();
    }
  });

  it("timestamps that run against the ids defeat the bound: every match is read (or sorted), same answer", () => {
    const rows: Row[] = [];
    for (let i = 1; i <= 3_000; i++)
      rows.push({ id: i, session: 0, role: "user", text: "龙", timestamp: 1_800_000_000 - i });
    const db = fileWith(["cli"], rows);
    try {
      catchUp(db);
      const exec = recordingExecutor(db);
      const ids = newestMatchCandidates(exec, CJK_INDEX_TABLE, cjkGramToken("龙"), {}, 20);
      // 64 → 512 → 4,096 (> 3,000 matches): the last read returns every match.
      expect(ids?.length).toBe(3_000);
      expect(ours(db, { q: "龙", limit: 20, offset: 0 }).map((h) => h.id)).toEqual(
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
    } finally {
      db.close();
    }
  });
});
