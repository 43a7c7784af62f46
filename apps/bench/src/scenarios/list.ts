import { openSessionStore, type SessionStore } from "@hermes/store";
import type Database from "better-sqlite3";
import { mainDataset } from "../data/datasets.js";
import { ensureDataset } from "../data/ensure-dataset.js";
import { caseFromSamples, measureAlternating } from "../measure-alternating.js";
import { openRawConnection } from "../raw-connection.js";
import { latencyChart } from "../report/render-chart.js";
import type { CaseResult, Scenario } from "../scenario.js";
import { missingMethod } from "../store-capability.js";

type Row = Record<string, unknown> & { id: string; end_reason: string | null; started_at: number };

/**
 * The reference's listing queries written by hand (SPEC.md §5 "search_sessions",
 * "list_sessions_rich", "get_compression_tip"), with prepared statements.
 */
class RawListing {
  readonly searchSessions: Database.Statement;
  readonly rich: Database.Statement;
  readonly richOne: Database.Statement;
  readonly tipStep: Database.Statement;
  readonly sessionCount: Database.Statement;
  readonly messageCount: Database.Statement;

  constructor(db: Database.Database) {
    const lastActive =
      "COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at)";
    const preview = `COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, X'0D', ' '), X'0A', ' '), 1, 63) FROM messages m
      WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL ORDER BY m.timestamp, m.id LIMIT 1), '')`;
    this.searchSessions = db.prepare(
      `SELECT s.*, ${lastActive} AS last_active FROM sessions s ORDER BY last_active DESC, s.started_at DESC, s.id DESC LIMIT ? OFFSET ?`,
    );
    this.rich = db.prepare(
      `SELECT s.*, ${preview} AS _preview_raw, ${lastActive} AS last_active FROM sessions s
       WHERE s.parent_session_id IS NULL OR EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id
         AND p.end_reason = 'branched' AND s.started_at >= p.ended_at)
       ORDER BY s.started_at DESC LIMIT ? OFFSET ?`,
    );
    this.richOne = db.prepare(
      `SELECT s.*, ${preview} AS _preview_raw, ${lastActive} AS last_active FROM sessions s WHERE s.id = ?`,
    );
    this.tipStep = db.prepare(
      `SELECT c.id FROM sessions c JOIN sessions p ON p.id = c.parent_session_id
       WHERE c.parent_session_id = ? AND p.end_reason = 'compression' AND c.started_at >= p.ended_at
       ORDER BY c.started_at DESC LIMIT 1`,
    );
    this.sessionCount = db.prepare("SELECT COUNT(*) FROM sessions").pluck();
    this.messageCount = db.prepare("SELECT COUNT(*) FROM messages").pluck();
  }

  #finish(row: Row): Row {
    const raw = String(row._preview_raw ?? "").trim();
    const { _preview_raw: _, ...rest } = row;
    return { ...rest, preview: raw.length > 60 ? `${raw.slice(0, 60)}...` : raw } as Row;
  }

  listRich(limit: number): Row[] {
    const rows = (this.rich.all(limit, 0) as Row[]).map((r) => this.#finish(r));
    return rows.map((row) => {
      if (row.end_reason !== "compression") return row;
      let tip = row.id;
      for (let hop = 0; hop < 100; hop++) {
        const next = this.tipStep.pluck().get(tip) as string | undefined;
        if (next === undefined) break;
        tip = next;
      }
      if (tip === row.id) return row;
      const t = this.#finish(this.richOne.get(tip) as Row);
      const projected: Row = { ...row, _lineage_root_id: row.id };
      for (const key of [
        "id",
        "ended_at",
        "end_reason",
        "message_count",
        "tool_call_count",
        "title",
        "last_active",
        "preview",
        "model",
        "system_prompt",
      ]) {
        projected[key] = t[key];
      }
      return projected;
    });
  }
}

async function measureCase(
  name: string,
  method: string,
  store: SessionStore,
  ours: () => Promise<unknown>,
  raw: () => unknown,
  plan: { warmup: number; iterations: number },
): Promise<CaseResult> {
  const missing = missingMethod(store, method);
  const samples = await measureAlternating(
    missing === null ? ours : () => Promise.reject(new Error(missing)),
    raw,
    { ...plan, rounds: 6, budgetMs: 15_000 },
  );
  const c = caseFromSamples(name, method, samples);
  if (missing !== null) c.note = missing;
  return c;
}

/** First pages of the listings and the counts, at 100,000 sessions. */
export const listScenario: Scenario = {
  name: "list",
  title: "Listing at 100,000 sessions: first pages and counts",
  description:
    "First page (20 rows) of listSessionsRich and searchSessions, sessionCount and messageCount on the generated 100,000-session, 1,000,000-message file, next to the reference's SQL written by hand with better-sqlite3.",
  async run(ctx) {
    const data = await ensureDataset(mainDataset(ctx), ctx.dataDir);
    const store = await openSessionStore({ path: data.path });
    const db = openRawConnection(data.path);
    const raw = new RawListing(db);
    const plan = ctx.quick ? { warmup: 2, iterations: 10 } : { warmup: 3, iterations: 40 };
    try {
      const cases = [
        await measureCase(
          "listSessionsRich page 1",
          "listSessionsRich",
          store,
          () => store.listSessionsRich({ limit: 20 }),
          () => raw.listRich(20),
          plan,
        ),
        await measureCase(
          "searchSessions page 1",
          "searchSessions",
          store,
          () => store.searchSessions({ limit: 20 }),
          () => raw.searchSessions.all(20, 0),
          plan,
        ),
        await measureCase(
          "sessionCount",
          "sessionCount",
          store,
          () => store.sessionCount(),
          () => raw.sessionCount.get(),
          plan,
        ),
        await measureCase(
          "messageCount",
          "messageCount",
          store,
          () => store.messageCount(),
          () => raw.messageCount.get(),
          plan,
        ),
      ];
      return {
        cases,
        notes: [
          `Data set: ${data.sessions.toLocaleString("en-US")} sessions, ${data.messages.toLocaleString("en-US")} messages (${data.cjkMessages.toLocaleString("en-US")} CJK), ${(data.fileBytes / 2 ** 20).toFixed(0)} MiB.`,
          "Baseline: the reference's queries (last_active and preview as correlated subqueries, children hidden except branches, compression tips projected) written by hand.",
        ],
        chart: latencyChart("Listing at 100,000 sessions", cases, { log: true }),
        parameters: { ...plan, rounds: 6, dataset: data.spec },
      };
    } finally {
      await store.close();
      db.close();
    }
  },
};
