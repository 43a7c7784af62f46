import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { FTS_TABLES, FTS_TRIGGERS } from "@hermes/search";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { mainDataset } from "../data/datasets.js";
import { ensureDataset } from "../data/ensure-dataset.js";
import { LongStepProgress } from "../data/long-step-progress.js";
import { summarizeLatencies, timeRatio } from "../latency-summary.js";
import { openRawConnection } from "../raw-connection.js";
import { latencyChart } from "../report/render-chart.js";
import type { Scenario } from "../scenario.js";
import { describeFailure } from "../store-capability.js";

const OLD_TRIGGERS = [
  "messages_fts_insert",
  "messages_fts_delete",
  "messages_fts_update",
  "messages_fts_trigram_insert",
  "messages_fts_trigram_delete",
  "messages_fts_trigram_update",
];

/** The reference's v11 step by hand (SPEC.md §3), in one BEGIN IMMEDIATE transaction. */
function rawUpgrade(path: string): { upgradeMs: number; closeMs: number } {
  const db = openRawConnection(path);
  const t0 = performance.now();
  db.transaction(() => {
    for (const name of OLD_TRIGGERS) db.exec(`DROP TRIGGER IF EXISTS ${name}`);
    db.exec("DROP TABLE IF EXISTS messages_fts");
    db.exec("DROP TABLE IF EXISTS messages_fts_trigram");
    for (const sql of Object.values(FTS_TABLES)) db.exec(sql);
    for (const sql of Object.values(FTS_TRIGGERS)) db.exec(sql);
    for (const table of ["messages_fts", "messages_fts_trigram"]) {
      db.exec(
        `INSERT INTO ${table}(rowid, content, tool_calls, tool_name) SELECT id, content, tool_calls, tool_name FROM messages`,
      );
    }
    db.exec("UPDATE schema_version SET version = 11");
  }).immediate();
  const upgradeMs = performance.now() - t0;
  const c0 = performance.now();
  db.close();
  return { upgradeMs, closeMs: performance.now() - c0 };
}

function verify(path: string): { version: number; hits: number } {
  const db = new Database(path, { readonly: true });
  try {
    return {
      version: db.prepare("SELECT version FROM schema_version").pluck().get() as number,
      hits: db
        .prepare("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'terminal'")
        .pluck()
        .get() as number,
    };
  } finally {
    db.close();
  }
}

/** The v10 → v11 upgrade of a 1,000,000-message file. */
export const migrateScenario: Scenario = {
  name: "migrate",
  title: "v10 → v11 upgrade of 1,000,000 messages",
  description:
    "openSessionStore on a copy of a reference v10 file (old single-column FTS tables, 1,000,000 messages) until the upgrade is done, next to the same steps in hand-written SQL on another copy: drop the six triggers and both FTS tables, recreate them, INSERT … SELECT backfill of both, version 11, in one BEGIN IMMEDIATE transaction.",
  async run(ctx) {
    const data = await ensureDataset(mainDataset(ctx, "v10"), ctx.dataDir);
    const reps = ctx.quick || ctx.scale >= 0.5 ? 1 : 2;
    const storeTimes: number[] = [];
    const rawTimes: number[] = [];
    const storeClose: number[] = [];
    const rawClose: number[] = [];
    let failure: ReturnType<typeof describeFailure> | null = null;
    const checks: string[] = [];
    for (let rep = 0; rep < reps; rep++) {
      const storePath = join(ctx.workDir, `migrate-store-${rep}.db`);
      const rawPath = join(ctx.workDir, `migrate-raw-${rep}.db`);
      copyFileSync(data.path, storePath);
      copyFileSync(data.path, rawPath);
      const runStore = async () => {
        const bars = new Map<string, LongStepProgress>();
        const t0 = performance.now();
        try {
          const store = await openSessionStore({
            path: storePath,
            onMigrationProgress: (p) => {
              if (ctx.quick) return;
              let bar = bars.get(p.step);
              if (bar === undefined) {
                bar = new LongStepProgress(`  store upgrade ${p.step}`, p.total);
                bars.set(p.step, bar);
              }
              bar.update(p.done);
              if (p.done >= p.total) bar.finish();
            },
          });
          storeTimes.push(performance.now() - t0);
          const c0 = performance.now();
          await store.close();
          storeClose.push(performance.now() - c0);
          const v = verify(storePath);
          checks.push(`store rep ${rep}: version ${v.version}, 'terminal' hits ${v.hits}`);
        } catch (error) {
          failure = describeFailure("openSessionStore (upgrade)", error);
        }
      };
      const runRaw = () => {
        const r = rawUpgrade(rawPath);
        rawTimes.push(r.upgradeMs);
        rawClose.push(r.closeMs);
        const v = verify(rawPath);
        checks.push(`raw rep ${rep}: version ${v.version}, 'terminal' hits ${v.hits}`);
      };
      if (rep % 2 === 0) {
        await runStore();
        runRaw();
      } else {
        runRaw();
        await runStore();
      }
      ctx.log(
        `rep ${rep}: store ${storeTimes.at(-1)?.toFixed(0) ?? "–"} ms, raw ${rawTimes.at(-1)?.toFixed(0)} ms`,
      );
    }
    const store = storeTimes.length > 0 && failure === null ? summarizeLatencies(storeTimes) : null;
    const baseline = summarizeLatencies(rawTimes);
    const f = failure as ReturnType<typeof describeFailure> | null;
    const c = {
      name: "v10→v11 upgrade",
      status: f?.status ?? ("ok" as const),
      note: f?.note,
      store,
      baseline,
      ratio: timeRatio(store, baseline),
      extra: {
        messages: data.messages,
        storeCloseMs: storeClose.length > 0 ? Math.round(Math.max(...storeClose)) : null,
        rawCloseMs: Math.round(Math.max(...rawClose)),
      },
    };
    return {
      cases: [c],
      notes: [
        `v10 file: ${data.messages.toLocaleString("en-US")} messages, ${data.sessions.toLocaleString("en-US")} sessions, ${(data.fileBytes / 2 ** 20).toFixed(0)} MiB; ${reps} repetition(s) per side on fresh copies, order alternating.`,
        "Time to a usable v11 file (openSessionStore resolved / COMMIT returned); closing (the WAL checkpoint) is reported apart.",
        `Checks: ${checks.join("; ")}.`,
      ],
      chart: latencyChart("v10 → v11 upgrade (time per upgrade)", [c]),
      parameters: { repetitions: reps, dataset: data.spec },
    };
  },
};
