import { randomBytes } from "node:crypto";
import { openPostgresSessionStore } from "@hermes/postgres";
import { openSessionStore } from "@hermes/store";
import { describe, expect, inject, it } from "vitest";
import { copyOfSample } from "./helpers/reference-sample.js";

const url = inject("pgConnectionString");
if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);

/** A query mix drawn from the sample's own words: single words, prefixes, phrases, OR, NOT. */
function queriesFrom(texts: string[]): string[] {
  const words = new Map<string, number>();
  const pairs: string[] = [];
  for (const text of texts) {
    const ws = text.match(/[\p{L}\p{N}]{4,}/gu) ?? [];
    for (const w of ws) words.set(w.toLowerCase(), (words.get(w.toLowerCase()) ?? 0) + 1);
    if (ws.length >= 2 && pairs.length < 15) pairs.push(`"${ws[0]} ${ws[1]}"`);
  }
  const ranked = [...words.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w);
  const common = ranked.slice(0, 25);
  const rare = ranked.slice(-15);
  const out = [...common, ...rare, ...pairs];
  for (let i = 0; i + 1 < 20; i += 2) out.push(`${common[i]} OR ${rare[i % rare.length]}`);
  for (let i = 0; i + 1 < 10; i++) out.push(`${common[i]} NOT ${common[i + 1]}`);
  for (let i = 0; i < 10; i++) out.push(`${(common[i] ?? "").slice(0, 3)}*`);
  out.push(...ranked.filter((w) => /[\u4e00-\u9fff]/u.test(w)).slice(0, 10));
  return out;
}

describe("differential on the reference sample (SQLite → PostgreSQL via importSessions)", () => {
  it("search, listing, lineage, conversations and usage agree on every session and a 100-query mix", async () => {
    const sqlite = await openSessionStore({ path: copyOfSample() });
    const postgres = await openPostgresSessionStore({
      connectionString: url,
      schema: `s_${randomBytes(6).toString("hex")}`,
    });
    try {
      const report = await postgres.importSessions(sqlite.exportStream());
      expect(report.invalid).toEqual([]);
      expect(await postgres.sessionCount()).toBe(await sqlite.sessionCount());
      expect(await postgres.messageCount()).toBe(await sqlite.messageCount());
      const all = await sqlite.exportAll();
      expect(await postgres.exportAll()).toEqual(all);
      for (const s of all) {
        expect(await postgres.getLineage(s.id)).toEqual(await sqlite.getLineage(s.id));
        expect(await postgres.getMessagesAsConversation(s.id, { includeAncestors: true })).toEqual(
          await sqlite.getMessagesAsConversation(s.id, { includeAncestors: true }),
        );
        expect(await postgres.resolveResumeSessionId(s.id)).toBe(await sqlite.resolveResumeSessionId(s.id));
      }
      expect(await postgres.listSessionsRich({ limit: 1000 })).toEqual(
        await sqlite.listSessionsRich({ limit: 1000 }),
      );
      for (const groupBy of ["source", "model", "day"] as const)
        expect(await postgres.usageStats({ groupBy })).toEqual(await sqlite.usageStats({ groupBy }));

      const texts = all.flatMap((s) => s.messages.map((m) => m.content ?? "")).filter((t) => t.length > 0);
      const queries = queriesFrom(texts);
      expect(queries.length).toBeGreaterThan(60);
      const differing: string[] = [];
      for (const q of queries) {
        const [a, b] = [
          await sqlite.searchMessages(q, { limit: 50 }),
          await postgres.searchMessages(q, { limit: 50 }),
        ];
        if (JSON.stringify(a) !== JSON.stringify(b)) differing.push(q);
      }
      expect(differing).toEqual([]);
    } finally {
      await sqlite.close();
      await postgres.close();
    }
  });
});
