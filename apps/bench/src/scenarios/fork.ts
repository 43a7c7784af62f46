import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { openSessionStore } from "@hermes/store";
import type Database from "better-sqlite3";
import { forkDataset } from "../data/datasets.js";
import { BIG_SESSION_ID, ensureDataset } from "../data/ensure-dataset.js";
import { caseFromSamples, measureAlternating } from "../measure-alternating.js";
import { openRawConnection } from "../raw-connection.js";
import { latencyChart } from "../report/render-chart.js";
import type { Scenario } from "../scenario.js";
import { missingMethod } from "../store-capability.js";

const MESSAGE_COLUMNS =
  "role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items";

/**
 * A fork by hand, inside the database: copy the session row (linked to its parent, titled by the
 * lineage rule), INSERT … SELECT its messages, set the counters, in one BEGIN IMMEDIATE.
 */
function rawFork(db: Database.Database): (index: number) => void {
  const titles = db.prepare("SELECT title FROM sessions WHERE title = ? OR title LIKE ? ESCAPE '\\'").pluck();
  const parentTitle = db.prepare("SELECT title FROM sessions WHERE id = ?").pluck();
  const insertSession = db.prepare(
    `INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at, title)
     SELECT ?, source, user_id, model, model_config, system_prompt, id, ?, ? FROM sessions WHERE id = ?`,
  );
  const copyMessages = db.prepare(
    `INSERT INTO messages (session_id, ${MESSAGE_COLUMNS}) SELECT ?, ${MESSAGE_COLUMNS} FROM messages WHERE session_id = ? ORDER BY timestamp, id`,
  );
  const counters = db.prepare(
    `UPDATE sessions SET message_count = (SELECT COUNT(*) FROM messages WHERE session_id = ?),
       tool_call_count = (SELECT tool_call_count FROM sessions WHERE id = ?) WHERE id = ?`,
  );
  const txn = db.transaction((newId: string) => {
    const base = String(parentTitle.get(BIG_SESSION_ID) ?? "fork").replace(/ #\d+$/, "");
    const existing = titles.all(base, `${base.replace(/[\\%_]/g, (c) => `\\${c}`)} #%`) as string[];
    let max = 0;
    for (const t of existing) {
      const m = / #(\d+)$/.exec(t);
      max = Math.max(max, m ? Number(m[1]) : 1);
    }
    insertSession.run(newId, Date.now() / 1000, max === 0 ? base : `${base} #${max + 1}`, BIG_SESSION_ID);
    copyMessages.run(newId, BIG_SESSION_ID);
    counters.run(newId, BIG_SESSION_ID, newId);
  });
  return (index) => txn.immediate(`raw-fork-${index}`);
}

/** Forking a 100,000-message session. */
export const forkScenario: Scenario = {
  name: "fork",
  title: "forkSession of a 100,000-message session",
  description:
    "forkSession(id) of a session of 100,000 generated messages (both FTS tables indexing the copies), next to the same copy in hand-written SQL (INSERT … SELECT of the messages, the session row, counters) in one BEGIN IMMEDIATE transaction; each side on its own copy of the file.",
  async run(ctx) {
    const data = await ensureDataset(forkDataset(ctx), ctx.dataDir);
    const storePath = join(ctx.workDir, "fork-store.db");
    const rawPath = join(ctx.workDir, "fork-raw.db");
    copyFileSync(data.path, storePath);
    copyFileSync(data.path, rawPath);
    const store = await openSessionStore({ path: storePath });
    const db = openRawConnection(rawPath);
    const raw = rawFork(db);
    const missing = missingMethod(store, "forkSession");
    const forkSession = (store as unknown as { forkSession?: (id: string, o?: object) => Promise<unknown> })
      .forkSession;
    const plan = ctx.quick
      ? { warmup: 0, iterations: 2, rounds: 2 }
      : { warmup: 0, iterations: 2, rounds: 2 };
    try {
      const samples = await measureAlternating(
        async () => {
          if (missing !== null || forkSession === undefined)
            throw new Error(missing ?? "forkSession missing");
          await forkSession.call(store, BIG_SESSION_ID, {});
        },
        raw,
        plan,
      );
      const rawCopies = db
        .prepare("SELECT COUNT(*) FROM sessions WHERE parent_session_id = ?")
        .pluck()
        .get(BIG_SESSION_ID) as number;
      const c = caseFromSamples("forkSession", "forkSession", samples, {
        messages: data.spec.bigSessionMessages,
        rawForks: rawCopies,
        target: "< 2 s",
      });
      if (missing !== null) c.note = missing;
      return {
        cases: [c],
        notes: [
          `Session of ${data.spec.bigSessionMessages.toLocaleString("en-US")} messages; ${plan.iterations} fork(s) per side, alternating, no warm-up (each fork adds that many rows and FTS entries to its file).`,
        ],
        chart: latencyChart(
          `Fork of a ${data.spec.bigSessionMessages.toLocaleString("en-US")}-message session`,
          [c],
        ),
        parameters: { ...plan, dataset: data.spec },
      };
    } finally {
      await store.close();
      db.close();
    }
  },
};
