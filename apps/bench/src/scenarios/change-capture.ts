import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type ChangeBatch, type ChangeCursor, changesSince } from "@hermes/store";
import { mainDataset } from "../data/datasets.js";
import { ensureDataset } from "../data/ensure-dataset.js";
import { caseFromSamples, measureAlternating } from "../measure-alternating.js";
import { openRawConnection } from "../raw-connection.js";
import { rawIdPoller } from "../raw-id-poller.js";
import { latencyChart } from "../report/render-chart.js";
import type { Scenario } from "../scenario.js";

/** How often both sides poll while following, in ms. */
const INTERVAL_MS = 10;

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Runs a non-following capture to its end; the batches' count, messages and last cursor. */
async function drain(path: string, cursor: ChangeCursor | null) {
  let batches = 0;
  let messages = 0;
  let last = cursor;
  for await (const b of changesSince(path, cursor)) {
    batches++;
    messages += b.messages.length;
    last = b.cursor;
  }
  return { batches, messages, cursor: last as ChangeCursor };
}

/** Change capture on a copy of the generated file: first copy, idle polls, append → batch. */
export const changeCaptureScenario: Scenario = {
  name: "change-capture",
  title: "Change capture: what changed in an agent's file since a cursor",
  description: `changesSince on a copy of the generated main file: the first full pass, a resumed poll that finds nothing, the CPU of idle polls while following (every ${INTERVAL_MS} ms: PRAGMA data_version), and an append by another connection until the batch carrying it, next to a raw better-sqlite3 reader polling SELECT … FROM messages WHERE id > ? (which sees appends only: no updates, visibility changes or deletes).`,
  async run(ctx) {
    const data = await ensureDataset(mainDataset(ctx), ctx.dataDir);
    const path = join(ctx.workDir, "change-capture.db");
    copyFileSync(data.path, path); // the cached data set is never written
    let t0 = performance.now();
    const c0 = cpuMs();
    const first = await drain(path, null);
    const firstMs = performance.now() - t0;
    const firstCpuMs = cpuMs() - c0;
    t0 = performance.now();
    const resumed = await drain(path, first.cursor);
    const resumedIdleMs = performance.now() - t0;

    const writer = openRawConnection(path);
    const sessionId = String(writer.prepare("SELECT id FROM sessions ORDER BY id LIMIT 1").pluck().get());
    const insert = writer.prepare(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
    );
    const bump = writer.prepare("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?");
    const append = writer.transaction((i: number) => {
      const id = Number(insert.run(sessionId, `change capture ${i}`, Date.now() / 1000).lastInsertRowid);
      bump.run(sessionId);
      return id;
    });
    const raw = openRawConnection(path);
    const poller = rawIdPoller(raw, INTERVAL_MS);
    const plan = ctx.quick
      ? { warmup: 2, iterations: 10, rounds: 2 }
      : { warmup: 3, iterations: 60, rounds: 4, budgetMs: 60_000 };
    const baseline = async (i: number) => poller.waitFor(append(i));
    /** Follows the file with these options: idle CPU per poll, then append → batch seen. */
    const follow = async (cursor: ChangeCursor, sessionScanIntervalMs: number) => {
      const stop = new AbortController();
      const feed = changesSince(path, cursor, {
        follow: true,
        intervalMs: INTERVAL_MS,
        signal: stop.signal,
        sessionScanIntervalMs,
      })[Symbol.asyncIterator]();
      let next = feed.next();
      try {
        // Idle: nothing is written; every poll is one data_version read.
        const c = cpuMs();
        const t = performance.now();
        await sleep(ctx.quick ? 300 : 2000);
        const idleCpuMsPerPoll = (cpuMs() - c) / ((performance.now() - t) / INTERVAL_MS);
        const changeCpu: number[] = [];
        const ours = async (i: number) => {
          const c = cpuMs();
          const id = append(i);
          for (;;) {
            const r = await next;
            next = feed.next();
            if (r.done) throw new Error("the capture ended");
            if ((r.value as ChangeBatch).messages.some((m) => m.id >= id)) break;
          }
          changeCpu.push(cpuMs() - c);
        };
        const samples = await measureAlternating(ours, baseline, plan);
        changeCpu.sort((a, b) => a - b);
        return {
          samples,
          idleCpuMsPerPoll: Number(idleCpuMsPerPoll.toFixed(3)),
          changePollCpuMsP50: Number((changeCpu[Math.floor(changeCpu.length / 2)] ?? 0).toFixed(1)),
        };
      } finally {
        stop.abort();
        await feed.return?.();
      }
    };
    try {
      const full = await follow(resumed.cursor, 0);
      const appends = await follow((await drain(path, resumed.cursor)).cursor, 60_000);
      const cases = [
        caseFromSamples("append → batch seen (full pass per poll)", "changesSince", full.samples, {
          intervalMs: INTERVAL_MS,
          sessions: data.spec.sessions,
          messages: data.spec.messages,
          firstPassMs: Math.round(firstMs),
          firstPassCpuMs: Math.round(firstCpuMs),
          firstPassMessagesPerSec: Math.round((first.messages / firstMs) * 1000),
          firstPassBatches: first.batches,
          cursorBytes: first.cursor.length,
          resumedIdlePollMs: Math.round(resumedIdleMs),
          idleCpuMsPerPoll: full.idleCpuMsPerPoll,
          changePollCpuMsP50: full.changePollCpuMsP50,
        }),
        caseFromSamples("append → batch seen (sessionScanIntervalMs 60 s)", "changesSince", appends.samples, {
          idleCpuMsPerPoll: appends.idleCpuMsPerPoll,
          changePollCpuMsP50: appends.changePollCpuMsP50,
        }),
      ];
      return {
        cases,
        notes: [
          "Ours reads, after each commit, every session's row signature (to see titles, flags, ends and deletes) and the rows of the sessions that changed; the baseline reads only the rowid range past its cursor, so it cannot see anything but appends.",
          "A resumed poll (a new process with a stored cursor) does one full pass even when nothing changed; a follower's idle poll is one PRAGMA data_version.",
          "With sessionScanIntervalMs, polls between two full passes read only the sessions with new messages (a rowid range); sessions changed otherwise wait for the next full pass.",
        ],
        chart: latencyChart("Append → batch seen by change capture", cases),
        parameters: {
          ...plan,
          intervalMs: INTERVAL_MS,
          sessions: data.spec.sessions,
          messages: data.spec.messages,
        },
      };
    } finally {
      raw.close();
      writer.close();
    }
  },
};
