import { referenceSanitizeFts5Query } from "@hermes/search";
import { openSessionStore } from "@hermes/store";
import type Database from "better-sqlite3";
import { mainDataset } from "../data/datasets.js";
import { ensureDataset } from "../data/ensure-dataset.js";
import { caseFromSamples, measureAlternating } from "../measure-alternating.js";
import { openRawConnection } from "../raw-connection.js";
import { latencyChart } from "../report/render-chart.js";
import type { CaseResult, Scenario } from "../scenario.js";
import { missingMethod } from "../store-capability.js";

/** The query mix of the search issue; `path` is the reference's route for it. */
export const SEARCH_QUERIES: ReadonlyArray<{
  name: string;
  query: string;
  path: "fts" | "trigram" | "like";
}> = [
  { name: "common term", query: "docker", path: "fts" },
  { name: "rare term", query: "zephyrine", path: "fts" },
  { name: "phrase", query: '"connection refused"', path: "fts" },
  { name: "prefix", query: "deploy*", path: "fts" },
  { name: "hyphenated", query: "chat-send", path: "fts" },
  { name: "OR of five", query: "docker OR nginx OR redis OR postgres OR kubernetes", path: "fts" },
  { name: "CJK 3+ chars", query: "数据库", path: "trigram" },
  { name: "CJK 2 chars", query: "桂林", path: "like" },
  { name: "CJK 1 char", query: "龙", path: "like" },
];

/** Objects of a reference v11 file; anything else in the file was added by our store. */
const REFERENCE_OBJECTS = new Set([
  "sessions",
  "messages",
  "state_meta",
  "schema_version",
  "sqlite_sequence",
  "sqlite_autoindex_sessions_1",
  "sqlite_autoindex_state_meta_1",
  "idx_sessions_source",
  "idx_sessions_parent",
  "idx_sessions_started",
  "idx_messages_session",
  "idx_sessions_title_unique",
  ...["messages_fts", "messages_fts_trigram"].flatMap((t) => [
    t,
    `${t}_data`,
    `${t}_idx`,
    `${t}_docsize`,
    `${t}_config`,
  ]),
]);

type Hit = Record<string, unknown> & {
  id: number;
  session_id: string;
  timestamp: number;
  content: string | null;
};

const cut = (s: string | null) => {
  const text = s ?? "";
  return text.length <= 200 ? text : [...text].slice(0, 200).join("");
};

/** The reference's search (SPEC.md §5 "Search"), written by hand: FTS5, trigram or LIKE, then context. */
class RawSearch {
  readonly #fts: Database.Statement;
  readonly #trigram: Database.Statement;
  readonly #like: Database.Statement;
  readonly #prev: Database.Statement;
  readonly #next: Database.Statement;

  constructor(db: Database.Database) {
    const cols =
      "m.id, m.session_id, m.role, m.timestamp, m.tool_name, m.content, s.source, s.model, s.started_at AS session_started";
    this.#fts = db.prepare(
      `SELECT ${cols}, snippet(messages_fts, -1, '>>>', '<<<', '...', 40) AS snippet FROM messages_fts
       JOIN messages m ON m.id = messages_fts.rowid JOIN sessions s ON s.id = m.session_id
       WHERE messages_fts MATCH ? ORDER BY rank LIMIT ? OFFSET ?`,
    );
    this.#trigram = db.prepare(
      `SELECT ${cols}, snippet(messages_fts_trigram, -1, '>>>', '<<<', '...', 40) AS snippet FROM messages_fts_trigram
       JOIN messages m ON m.id = messages_fts_trigram.rowid JOIN sessions s ON s.id = m.session_id
       WHERE messages_fts_trigram MATCH ? ORDER BY rank LIMIT ? OFFSET ?`,
    );
    this.#like = db.prepare(
      `SELECT ${cols}, m.tool_calls FROM messages m JOIN sessions s ON s.id = m.session_id
       WHERE (m.content LIKE ? ESCAPE '\\' OR m.tool_calls LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\')
       ORDER BY m.timestamp DESC LIMIT ? OFFSET ?`,
    );
    this.#prev = db.prepare(
      `SELECT role, content FROM messages WHERE session_id = ? AND (timestamp < ? OR (timestamp = ? AND id < ?))
       ORDER BY timestamp DESC, id DESC LIMIT 1`,
    );
    this.#next = db.prepare(
      `SELECT role, content FROM messages WHERE session_id = ? AND (timestamp > ? OR (timestamp = ? AND id > ?))
       ORDER BY timestamp, id LIMIT 1`,
    );
  }

  search(query: string, path: "fts" | "trigram" | "like", limit = 20): Hit[] {
    let hits: Hit[];
    if (path === "fts") {
      hits = this.#fts.all(referenceSanitizeFts5Query(query), limit, 0) as Hit[];
    } else {
      const raw = query.replace(/^"+|"+$/g, "").trim();
      if (path === "trigram") {
        const match = raw
          .split(/\s+/)
          .map((t) => (/^(AND|OR|NOT)$/i.test(t) ? t : `"${t.replaceAll('"', '""')}"`))
          .join(" ");
        hits = this.#trigram.all(match, limit, 0) as Hit[];
      } else {
        const pattern = `%${raw.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
        hits = (
          this.#like.all(pattern, pattern, pattern, limit, 0) as Array<Hit & { tool_calls: string | null }>
        ).map((h) => {
          const source =
            [h.content, h.tool_calls, h.tool_name as string | null].find((t) => t?.includes(raw)) ?? "";
          const at = source.indexOf(raw);
          return {
            ...h,
            snippet: at < 0 ? "" : source.slice(Math.max(0, at - 40), Math.max(0, at - 40) + 120),
          };
        });
      }
    }
    return hits.map((h) => {
      const context: Array<{ role: string; content: string }> = [];
      const prev = this.#prev.get(h.session_id, h.timestamp, h.timestamp, h.id) as
        | { role: string; content: string | null }
        | undefined;
      if (prev) context.push({ role: prev.role, content: cut(prev.content) });
      context.push({ role: String(h.role), content: cut(h.content) });
      const next = this.#next.get(h.session_id, h.timestamp, h.timestamp, h.id) as
        | { role: string; content: string | null }
        | undefined;
      if (next) context.push({ role: next.role, content: cut(next.content) });
      const { content: _, ...rest } = h;
      return { ...rest, context } as unknown as Hit;
    });
  }
}

/** Bytes of objects our store added to a reference v11 file (an extra search index). */
function extraObjectBytes(db: Database.Database): { names: string[]; bytes: number } {
  const names = (
    db.prepare("SELECT name FROM sqlite_master WHERE rootpage > 0").pluck().all() as string[]
  ).filter((n) => !REFERENCE_OBJECTS.has(n) && !n.startsWith("sqlite_stat"));
  let bytes = 0;
  try {
    const size = db.prepare("SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name = ?").pluck();
    for (const name of names) bytes += size.get(name) as number;
  } catch {
    return { names, bytes: Number.NaN };
  }
  return { names, bytes };
}

/** The search issue's query mix on 1,000,000 messages. */
export const searchScenario: Scenario = {
  name: "search",
  title: "searchMessages on 1,000,000 messages (10% CJK)",
  description:
    "Nine query types (common, rare, phrase, prefix, hyphenated, OR of five, CJK of 3+, 2 and 1 characters), 20 hits each with context, next to the reference's query run by hand: the plain FTS5 / trigram MATCH with the same ORDER BY rank, or its LIKE scan for 1–2-character CJK terms.",
  async run(ctx) {
    const data = await ensureDataset(mainDataset(ctx), ctx.dataDir);
    ctx.log("opening the store (an extra search index may be built on first open)");
    const opened = performance.now();
    const store = await openSessionStore({ path: data.path });
    const openMs = performance.now() - opened;
    const db = openRawConnection(data.path);
    const raw = new RawSearch(db);
    const missing = missingMethod(store, "searchMessages");
    const plan = ctx.quick
      ? { warmup: 1, iterations: 6, rounds: 2 }
      : { warmup: 2, iterations: 30, rounds: 6, budgetMs: 10_000 };
    const cases: CaseResult[] = [];
    try {
      for (const q of SEARCH_QUERIES) {
        let storeHits: number | null = null;
        let rawHits = 0;
        const samples = await measureAlternating(
          async () => {
            if (missing !== null) throw new Error(missing);
            storeHits = (await store.searchMessages(q.query, { limit: 20 })).length;
          },
          () => {
            rawHits = raw.search(q.query, q.path).length;
          },
          plan,
        );
        const c = caseFromSamples(q.name, "searchMessages", samples, {
          query: q.query,
          baselinePath: q.path,
          storeHits,
          rawHits,
        });
        if (missing !== null) c.note = missing;
        cases.push(c);
        ctx.log(`${q.name}: done`);
      }
      const extra = extraObjectBytes(db);
      return {
        cases,
        notes: [
          `Data set: ${data.messages.toLocaleString("en-US")} messages (${data.cjkMessages.toLocaleString("en-US")} CJK) in ${data.sessions.toLocaleString("en-US")} sessions, ${(data.fileBytes / 2 ** 20).toFixed(0)} MiB.`,
          "Targets (search issue): English queries within 1.2× of the raw FTS5 query; 1–2-character CJK terms at least 50× faster than the LIKE scan (ratio ≤ 0.02).",
          `Objects our store added to the file: ${extra.names.length === 0 ? "none" : extra.names.join(", ")}; ${Number.isFinite(extra.bytes) ? `${extra.bytes.toLocaleString("en-US")} bytes, ${(extra.bytes / data.messages).toFixed(1)} bytes per message` : "size unknown (dbstat unavailable)"}.`,
          `Opening the store on this file took ${openMs.toFixed(0)} ms.`,
        ],
        chart: latencyChart("Search: latency per query type (log scale)", cases, { log: true }),
        parameters: {
          ...plan,
          limit: 20,
          dataset: data.spec,
          extraIndexBytes: extra.bytes,
          extraObjects: extra.names,
          storeOpenMs: Math.round(openMs),
        },
      };
    } finally {
      await store.close();
      db.close();
    }
  },
};
