import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { startChild } from "./helpers/child-process.js";
import { tempDir } from "./helpers/temp-dir.js";

// Issue 9, scenario 12: interop under load. Two processes write with the reference's SQL only
// (raw better-sqlite3, its statements, its 1 s busy timeout and retry loop) for a sustained run
// while this process appends, updates counters and searches through the store (which also
// brings its short-CJK index up to date as it goes). Afterwards every row of every writer is
// intact, every counter equals its rows, SQLite's and FTS5's integrity checks pass, and the
// short-CJK index has caught up with the foreign rows.

const DURATION_MS = 12_000;
const FOREIGN = ["p1", "p2"];

/** Same as the child's `contentOf` (test/child/reference-load-writer.mjs). */
function foreignContent(tag: string, i: number): string {
  if (i % 3 === 0) return `${tag} 部署 ${i} 日志`;
  if (i % 3 === 1) return `${tag} refload ${i} walrus`;
  return `${tag} 東京都 ${i}`;
}
function ourContent(i: number): string {
  if (i % 3 === 0) return `ours 部署 ${i} 日志`;
  if (i % 3 === 1) return `ours storeload ${i} walrus`;
  return `ours 東京都 ${i}`;
}

/** Every hit of a query, all pages. */
async function allHits(store: SessionStore, query: string): Promise<number[]> {
  const ids: number[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await store.searchMessages(query, { limit: 1000, offset });
    ids.push(...page.map((h) => h.id));
    if (page.length < 1000) return ids.sort((a, b) => a - b);
  }
}

describe("interop under load (issue 9, scenario 12)", () => {
  it(`two reference-SQL processes and the store write and search for ${DURATION_MS / 1000} s; everything intact`, async () => {
    const dir = tempDir();
    const path = join(dir, "state.db");
    const stopPath = join(dir, "stop");
    const store = await openSessionStore({ path });
    for (let k = 0; k < 3; k++) await store.createSession({ id: `ours-${k}`, source: "cli" });
    // The short-CJK index exists before the load, so the foreign rows reach it only through the
    // plain-SQL queue triggers the reference runs without knowing.
    expect(await store.searchMessages("部署")).toEqual([]);

    const children = FOREIGN.map((tag) =>
      startChild("reference-load-writer.mjs", [path, tag, String(DURATION_MS), stopPath]),
    );
    await Promise.all(children.map((c) => c.waitForLine("ready")));

    const ours = new Map<number, string>();
    const deadline = performance.now() + DURATION_MS;
    let searches = 0;
    let i = 0;
    // At least DURATION_MS, and at least 11 search rounds while the reference's writers run
    // (on a loaded machine 12 s may hold fewer); they stop once told.
    while (performance.now() < deadline || searches <= 10) {
      if (i % 25 === 24) {
        // One agent turn at once.
        const batch = [0, 1, 2].map((j) => ({
          sessionId: `ours-${(i + j) % 3}`,
          role: "assistant",
          content: ourContent(i + j),
          toolCalls: [{ id: `t${i + j}`, function: { name: "search" } }],
        }));
        const ids = await store.appendMessages(batch);
        ids.forEach((id, j) => {
          ours.set(id, ourContent(i + j));
        });
        i += 3;
      } else {
        const id = await store.appendMessage({
          sessionId: `ours-${i % 3}`,
          role: "user",
          content: ourContent(i),
        });
        ours.set(id, ourContent(i));
        i++;
      }
      if (i % 10 === 0)
        await store.updateTokenCounts(`ours-${i % 3}`, { inputTokens: 7, outputTokens: 3, apiCallCount: 1 });
      if (i % 15 === 0) {
        // Short CJK (our index, caught up first), trigram CJK, and words: answers only, no errors.
        for (const [q, term] of [
          ["部署", "部署"],
          ["東京都", "東京都"],
          ["walrus", "walrus"],
        ] as const) {
          const hits = await store.searchMessages(q, { limit: 10 });
          expect(hits.length).toBeGreaterThan(0);
          for (const h of hits) expect(h.snippet.replace(/>>>|<<<|\.\.\./g, "")).toContain(term);
        }
        searches++;
      }
      // The agent's own pace, and the event loop's other work.
      await new Promise((r) => setTimeout(r, 1));
    }
    // Every search round above ran while both reference writers were still writing.
    for (const c of children) expect(c.process.exitCode).toBeNull();
    writeFileSync(stopPath, "");

    const results = await Promise.all(
      children.map(async (c) => {
        const exit = await c.exited;
        expect(exit.code, exit.stderr).toBe(0);
        return c.result<{ tag: string; written: Array<[number, number]>; errors: string[] }>();
      }),
    );
    // The reference's writers never gave up (15 attempts of a 1 s busy timeout each).
    for (const r of results) expect(r.errors).toEqual([]);

    const raw = new Database(path, { readonly: true });
    try {
      const content = raw.prepare("SELECT content FROM messages WHERE id = ?").pluck();
      // Every row of every writer, intact.
      for (const [id, text] of ours) expect(content.get(id)).toBe(text);
      const expectedAll = new Map(ours);
      for (const r of results) {
        expect(r.written.length).toBeGreaterThan(100);
        for (const [id, n] of r.written) {
          expect(content.get(id)).toBe(foreignContent(r.tag, n));
          expectedAll.set(id, foreignContent(r.tag, n));
        }
      }
      expect(raw.prepare("SELECT count(*) FROM messages").pluck().get()).toBe(expectedAll.size);

      // Counters equal rows, for every session of every writer.
      const drift = raw
        .prepare(
          `SELECT s.id, s.message_count, s.tool_call_count,
             (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS rows_,
             (SELECT coalesce(sum(json_array_length(m.tool_calls)), 0) FROM messages m WHERE m.session_id = s.id) AS calls
           FROM sessions s`,
        )
        .all() as Array<{
        id: string;
        message_count: number;
        tool_call_count: number;
        rows_: number;
        calls: number;
      }>;
      expect(drift).toHaveLength(3 + 4 * FOREIGN.length);
      for (const s of drift) {
        expect([s.id, s.message_count, s.tool_call_count]).toEqual([s.id, s.rows_, s.calls]);
      }
      // Token counters of the reference's writers: one update per ten messages, none lost.
      for (const r of results) {
        const updates = r.written.filter(([, n]) => n % 10 === 9).length;
        const total = raw
          .prepare("SELECT sum(input_tokens) AS i, sum(api_call_count) AS a FROM sessions WHERE id LIKE ?")
          .get(`ref-${r.tag}-%`) as { i: number; a: number };
        expect(total).toEqual({ i: 10 * updates, a: updates });
      }
    } finally {
      raw.close();
    }

    // Every index consistent: SQLite, both FTS5 tables (against `messages`), the short-CJK index.
    const check = new Database(path);
    try {
      expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
      for (const t of ["messages_fts", "messages_fts_trigram"]) {
        check.prepare(`INSERT INTO ${t}(${t}, rank) VALUES ('integrity-check', 1)`).run();
      }
    } finally {
      check.close();
    }
    // Reads through the store see every message of its own sessions.
    let readBack = 0;
    for (let k = 0; k < 3; k++) readBack += (await store.getMessages(`ours-${k}`)).length;
    expect(readBack).toBe(ours.size);
    const byTerm = async (term: string) => {
      const expected = new Database(path, { readonly: true });
      try {
        return expected
          .prepare("SELECT id FROM messages WHERE content LIKE ? ORDER BY id")
          .pluck()
          .all(`%${term}%`) as number[];
      } finally {
        expected.close();
      }
    };
    // Short CJK terms (our index, fed by the reference's writes through its queue), a trigram
    // term and a word: each finds exactly the rows that contain it, whoever wrote them.
    for (const term of ["部署", "東京", "東京都", "walrus"]) {
      const expected = await byTerm(term);
      expect(expected.length).toBeGreaterThan(200);
      expect(await allHits(store, term)).toEqual(expected);
    }
    const report = await store.verifySearchIndex();
    expect(report.indexes.map((x) => [x.name, x.status])).toEqual([
      ["messages_fts", "ok"],
      ["messages_fts_trigram", "ok"],
      ["hermes_search_cjk", "ok"],
    ]);
    console.info(
      `interop load: store ${ours.size} messages, ${searches} search rounds; ` +
        results.map((r) => `${r.tag} ${r.written.length} messages`).join(", ") +
        `; store stats ${JSON.stringify(store.stats())}`,
    );
    await store.close();
  }, 120_000);
});
