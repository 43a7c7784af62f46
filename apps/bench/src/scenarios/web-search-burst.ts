import { summarizeLatencies, timeRatio } from "../latency-summary.js";
import type { CaseResult } from "../scenario.js";
import { SEARCH_QUERIES } from "./search.js";
import { call, ServerProcess } from "./web-server-process.js";

/** How the burst runs: concurrent clients, each sending the search mix once, on this many fresh servers per side. */
export interface BurstPlan {
  clients: number;
  rounds: number;
}

/** One fresh server's burst: request latencies and the server's loop delay meanwhile. */
interface BurstRun {
  latencies: number[];
  wallMs: number;
  startMs: number;
  loop: { p50Ms: number; p99Ms: number; maxMs: number };
}

/**
 * Starts a server on `db` and, as soon as it listens, sends it the search mix from
 * `plan.clients` clients at once (each starting at another query): the first searches a
 * server gets, when its read workers are cold unless it warmed them.
 */
async function burst(db: string, warm: boolean, plan: BurstPlan): Promise<BurstRun> {
  const server = await ServerProcess.start(db, { warm });
  try {
    server.resetLoop();
    const latencies: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: plan.clients }, async (_, c) => {
        for (let i = 0; i < SEARCH_QUERIES.length; i++) {
          const q = SEARCH_QUERIES[(i + c * 2) % SEARCH_QUERIES.length]!;
          const t = performance.now();
          await call(server, `/api/search?q=${encodeURIComponent(q.query)}&limit=20`);
          latencies.push(performance.now() - t);
        }
      }),
    );
    const wallMs = performance.now() - t0;
    const loop = await server.readLoop();
    return { latencies, wallMs, startMs: server.startMs, loop };
  } finally {
    await server.stop();
  }
}

const list = (runs: BurstRun[], pick: (r: BurstRun) => number) =>
  runs.map((r) => pick(r).toFixed(1)).join(" / ");

/**
 * A search burst on freshly started servers: ours opens its store with `warmReaders` (what
 * `serve` does), the baseline serves a store whose read workers start on demand (before). Sides
 * alternate server by server (ours, before, before, ours, …). The case's times are the
 * requests'; the extras give the server's event-loop delay (p50 / p99 / max) per server run.
 */
export async function searchBurstCase(db: string, plan: BurstPlan): Promise<CaseResult> {
  const ours: BurstRun[] = [];
  const before: BurstRun[] = [];
  for (let r = 0; r < plan.rounds; r++) {
    for (const warm of r % 2 === 0 ? [true, false] : [false, true])
      (warm ? ours : before).push(await burst(db, warm, plan));
  }
  const figures = (runs: BurstRun[]) =>
    summarizeLatencies(
      runs.flatMap((r) => r.latencies),
      runs.reduce((a, r) => a + r.wallMs, 0),
    );
  const store = figures(ours);
  const baseline = figures(before);
  const max = (runs: BurstRun[]) => Math.max(...runs.map((r) => r.loop.maxMs));
  return {
    name: `search burst on a fresh server (${plan.clients} clients × ${SEARCH_QUERIES.length} queries)`,
    status: "ok",
    store,
    baseline,
    ratio: timeRatio(store, baseline),
    extra: {
      "warm.loopP50Ms": list(ours, (r) => r.loop.p50Ms),
      "warm.loopP99Ms": list(ours, (r) => r.loop.p99Ms),
      "warm.loopMaxMs": list(ours, (r) => r.loop.maxMs),
      "warm.startMs": list(ours, (r) => r.startMs),
      "onDemand.loopP50Ms": list(before, (r) => r.loop.p50Ms),
      "onDemand.loopP99Ms": list(before, (r) => r.loop.p99Ms),
      "onDemand.loopMaxMs": list(before, (r) => r.loop.maxMs),
      "onDemand.startMs": list(before, (r) => r.startMs),
      warmLoopMaxMs: max(ours),
      onDemandLoopMaxMs: max(before),
    },
  };
}
