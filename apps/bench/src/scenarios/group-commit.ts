import { join } from "node:path";
import { openSessionStore, type SessionStore } from "@hermes/store";
import { summarizeLatencies, timeRatio } from "../latency-summary.js";
import { openRawConnection } from "../raw-connection.js";
import { BASELINE_LABEL, STORE_LABEL, scalingChart } from "../report/render-chart.js";
import type { CaseResult, Scenario } from "../scenario.js";
import { generateMessages, RawAppender, toAppendInput } from "./message-fixtures.js";

const CALLERS = [1, 8, 32, 128];

/** A FIFO of writes, each in its own transaction: what a store without group commit does. */
class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => T): Promise<T> {
    const p = this.#tail.then(fn);
    this.#tail = p.catch(() => undefined);
    return p;
  }
}

/** `callers` async tasks, each appending its share in order; latency from call to resolution. */
async function runCallers(
  callers: number,
  total: number,
  append: (caller: number, i: number) => Promise<unknown>,
): Promise<{ latencies: number[]; wallMs: number }> {
  const perCaller = Math.ceil(total / callers);
  const latencies: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      for (let i = 0; i < perCaller; i++) {
        const start = performance.now();
        await append(caller, i);
        latencies.push(performance.now() - start);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - t0 };
}

function groupStats(store: SessionStore): Record<string, number> {
  const stats = store.stats() as unknown as Record<string, unknown>;
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(stats)) {
    if (/group/i.test(key) && typeof value === "number") out[key] = Math.round(value * 100) / 100;
  }
  return out;
}

/** Concurrent async callers in one process, against the same appends each in its own transaction. */
export const groupCommitScenario: Scenario = {
  name: "group-commit",
  title: "Group commit: 1–128 concurrent callers in one process",
  description:
    "1, 8, 32 and 128 async callers in one process append concurrently (synchronous=FULL) through the store; next to the same appends each committed in its own BEGIN IMMEDIATE transaction with raw better-sqlite3 behind a FIFO, at the same concurrency.",
  async run(ctx) {
    const total = ctx.quick ? 64 : Math.max(256, Math.round(2048 * Math.min(1, ctx.scale * 2)));
    const messages = generateMessages(ctx.seed + 21, 4096);
    const cases: CaseResult[] = [];
    const points: Array<{ x: number; side: string; opsPerSec: number | null; p99Ms: number | null }> = [];
    for (const callers of CALLERS) {
      const ids = Array.from({ length: callers }, (_, i) => `caller-${i}`);
      const storePath = join(ctx.workDir, `group-${callers}.db`);
      const rawPath = join(ctx.workDir, `group-raw-${callers}.db`);
      for (const path of [storePath, rawPath]) {
        const s = await openSessionStore({ path });
        for (const id of ids) await s.createSession({ id, source: "bench", model: "bench" });
        await s.close();
      }
      const input = (caller: number, i: number) =>
        toAppendInput(ids[caller]!, messages[(caller * 31 + i) % messages.length]!, ` [c${caller}-${i}]`);
      const store = await openSessionStore({ path: storePath });
      const db = openRawConnection(rawPath);
      const appender = new RawAppender(db);
      const queue = new SerialQueue();
      const runStore = () => runCallers(callers, total, (c, i) => store.appendMessage(input(c, i)));
      const runRaw = () =>
        runCallers(callers, total, (c, i) => queue.run(() => appender.append(input(c, i))));
      // Warm both paths, then measure in alternating order.
      const warm = ctx.quick ? 16 : 64;
      await runCallers(callers, warm, (c, i) => store.appendMessage(input(c, i + 100_000)));
      await runCallers(callers, warm, (c, i) => queue.run(() => appender.append(input(c, i + 100_000))));
      const before = groupStats(store);
      let s: { latencies: number[]; wallMs: number };
      let r: { latencies: number[]; wallMs: number };
      if (callers % 2 === 0) {
        r = await runRaw();
        s = await runStore();
      } else {
        s = await runStore();
        r = await runRaw();
      }
      const after = groupStats(store);
      await store.close();
      db.close();
      const storeFigures = summarizeLatencies(s.latencies, s.wallMs);
      const rawFigures = summarizeLatencies(r.latencies, r.wallMs);
      const extra: Record<string, number | string> = { appends: s.latencies.length };
      for (const [key, value] of Object.entries(after)) extra[key] = value;
      if (Object.keys(after).length === 0) extra.groupStats = "store.stats() has no group counters yet";
      else if (before.groupsCommitted !== undefined && after.groupsCommitted !== undefined) {
        extra.writesPerGroupMeasured =
          Math.round(
            (s.latencies.length / Math.max(1, after.groupsCommitted - before.groupsCommitted)) * 100,
          ) / 100;
      }
      cases.push({
        name: `callers=${callers}`,
        status: "ok",
        store: storeFigures,
        baseline: rawFigures,
        ratio: timeRatio(storeFigures, rawFigures),
        extra,
      });
      points.push({
        x: callers,
        side: STORE_LABEL,
        opsPerSec: storeFigures.opsPerSec,
        p99Ms: storeFigures.p99Ms,
      });
      points.push({
        x: callers,
        side: `${BASELINE_LABEL} (one txn per append)`,
        opsPerSec: rawFigures.opsPerSec,
        p99Ms: rawFigures.p99Ms,
      });
      ctx.log(
        `callers=${callers}: ${Math.round(storeFigures.opsPerSec)} appends/s (raw ${Math.round(rawFigures.opsPerSec)})`,
      );
    }
    return {
      cases,
      notes: [
        `${total} measured appends per side and level (callers append to their own session, in order), after a short unrecorded warm-up; ops/s = appends / wall time; latency from call to resolution, queueing included.`,
        "Target (group-commit issue): at 32 callers at least 2.5× the baseline's throughput (ratio ≤ 0.40) with p99 no worse than the baseline's.",
      ],
      chart: scalingChart(
        "Group commit: throughput and p99 against concurrent callers",
        "concurrent callers",
        points,
      ),
      parameters: { callers: CALLERS, appendsPerLevel: total },
    };
  },
};
