import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { openSessionStore, type SessionStore } from "@hermes/store";
import { mainDataset } from "../data/datasets.js";
import { ensureDataset } from "../data/ensure-dataset.js";
import { type Figures, summarizeLatencies, timeRatio } from "../latency-summary.js";
import { latencyChart } from "../report/render-chart.js";
import type { CaseResult, Scenario } from "../scenario.js";
import { SEARCH_QUERIES } from "./search.js";

const CLIENTS = 4;
/** Pause of the appender between two appends (an agent writing about 100 messages a second). */
const APPEND_GAP_MS = 10;

interface LoadFigures {
  calls: Figures;
  loopP50Ms: number;
  loopP99Ms: number;
  loopMaxMs: number;
  appends: number;
  searchesPerSec: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * 4 clients loop over the search mix and, given a session, 1 appender writes, for `ms`; the
 * event loop's delay meanwhile.
 */
async function mixedLoad(store: SessionStore, sessionId: string | null, ms: number): Promise<LoadFigures> {
  const latencies: number[] = [];
  let appends = 0;
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const end = performance.now() + ms;
  histogram.enable();
  const started = performance.now();
  const client = async (offset: number) => {
    for (let i = offset; performance.now() < end; i++) {
      const q = SEARCH_QUERIES[i % SEARCH_QUERIES.length]!;
      const t = performance.now();
      await store.searchMessages(q.query, { limit: 20 });
      latencies.push(performance.now() - t);
      // As a server's request handler: the next request arrives as an event, after the loop turned.
      await new Promise((r) => setImmediate(r));
    }
  };
  const appender = async () => {
    while (sessionId !== null && performance.now() < end) {
      await store.appendMessage({
        sessionId,
        role: "user",
        content: `reads bench append ${appends} docker deploy`,
      });
      appends++;
      await sleep(APPEND_GAP_MS);
    }
  };
  await Promise.all([...Array.from({ length: CLIENTS }, (_, c) => client(c * 2)), appender()]);
  const wall = performance.now() - started;
  await sleep(20); // one more tick of the histogram's timer, so a block at the very end counts
  histogram.disable();
  const calls = summarizeLatencies(latencies, wall);
  return {
    calls,
    loopP50Ms: histogram.percentile(50) / 1e6,
    loopP99Ms: histogram.percentile(99) / 1e6,
    loopMaxMs: histogram.max / 1e6,
    appends,
    searchesPerSec: calls.opsPerSec,
  };
}

/** Sequential latencies of one small read. */
async function smallReads(n: number, read: () => Promise<unknown>): Promise<Figures> {
  for (let i = 0; i < Math.min(50, n); i++) await read();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await read();
    samples.push(performance.now() - t);
  }
  return summarizeLatencies(samples);
}

/** The slowest query of the mix: long enough to be aborted mid-query. */
const LONG_QUERY = "docker OR nginx OR redis OR postgres OR kubernetes";

/**
 * Time from `abort()` to the call's end, `abort()` coming `afterMs` into a long search, and how
 * many calls rejected with `ABORTED` (the others had answered before the abort).
 */
async function abortLatencies(
  store: SessionStore,
  n: number,
  afterMs: number,
): Promise<{ figures: Figures; aborted: number }> {
  const samples: number[] = [];
  let aborted = 0;
  for (let i = 0; i < n; i++) {
    const ac = new AbortController();
    const call = store.searchMessages(LONG_QUERY, { signal: ac.signal }).then(
      () => "resolved",
      (e: { code?: string }) => e.code ?? "error",
    );
    await sleep(afterMs);
    const t = performance.now();
    ac.abort();
    const outcome = await call;
    samples.push(performance.now() - t);
    if (outcome === "ABORTED") aborted++;
    else if (outcome !== "resolved") throw new Error(`an aborted search ended with ${outcome}`);
  }
  return { figures: summarizeLatencies(samples), aborted };
}

/** The event loop's delay while `writers` callers append 4-message turns back to back for `ms`. */
async function writeLoad(
  path: string,
  synchronous: "FULL" | "NORMAL",
  writers: number,
  ms: number,
  writer: "inline" | "thread" = "inline",
): Promise<{ commits: Figures; loopP99Ms: number; loopMaxMs: number; checkpoints: number }> {
  const store = await openSessionStore({ path, synchronous, readers: 0, writer });
  try {
    await store.ensureSession({ id: `reads-bench-writes-${synchronous}`, source: "bench" });
    const latencies: number[] = [];
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    const end = performance.now() + ms;
    histogram.enable();
    const started = performance.now();
    const writer = async (w: number) => {
      for (let i = 0; performance.now() < end; i++) {
        const t = performance.now();
        await store.appendMessages(
          [0, 1, 2, 3].map((k) => ({
            sessionId: `reads-bench-writes-${synchronous}`,
            role: k % 2 === 0 ? "user" : "assistant",
            content: `writer ${w} turn ${i} part ${k}: docker deploy nginx`,
          })),
        );
        latencies.push(performance.now() - t);
      }
    };
    await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
    const wall = performance.now() - started;
    await sleep(20);
    histogram.disable();
    return {
      commits: summarizeLatencies(latencies, wall),
      loopP99Ms: histogram.percentile(99) / 1e6,
      loopMaxMs: histogram.max / 1e6,
      checkpoints: store.stats().checkpoints,
    };
  } finally {
    await store.close();
  }
}

interface Side {
  load: LoadFigures;
  readsOnly: LoadFigures;
  getSession: Figures;
  listFirstPage: Figures;
  abort: { figures: Figures; aborted: number };
}

/** Builds the store's short-CJK side index of the copy, so that both sides search with it. */
async function buildCjkIndex(path: string): Promise<void> {
  const store = await openSessionStore({ path, readers: 0, cjkIndex: "eager" });
  try {
    while (store.stats().sideIndexes.cjk.state !== "ready") await sleep(200);
  } finally {
    await store.close();
  }
}

/**
 * The mixed load alone, with the store's writes on its writer thread and its default pool (the
 * rest of a side does not write).
 */
async function runWriterThreadSide(path: string, loadMs: number): Promise<LoadFigures> {
  const store = await openSessionStore({ path, writer: "thread" });
  try {
    await store.readPool?.warmUp(store.readPool.size);
    await store.ensureSession({ id: "reads-bench-appender", source: "bench" });
    return await mixedLoad(store, "reads-bench-appender", loadMs);
  } finally {
    await store.close();
  }
}

/**
 * One side: `readers` undefined is the store's default pool (sized to the machine). Writes on
 * the caller's thread, whatever the store's default: the third side has the writer thread.
 */
async function runSide(
  path: string,
  readers: number | undefined,
  loadMs: number,
  smallN: number,
): Promise<Side & { readers: number }> {
  const store = await openSessionStore({
    path,
    writer: "inline",
    ...(readers === undefined ? {} : { readers }),
  });
  try {
    const size = store.readPool?.size ?? 0;
    await store.readPool?.warmUp(size);
    const first = (await store.listSessionsRich({ limit: 1 }))[0]!.id;
    const getSession = await smallReads(smallN, () => store.getSession(first));
    const listFirstPage = await smallReads(smallN, () => store.listSessionsRich({ limit: 20 }));
    await store.ensureSession({ id: "reads-bench-appender", source: "bench" });
    const load = await mixedLoad(store, "reads-bench-appender", loadMs);
    const readsOnly = await mixedLoad(store, null, loadMs);
    const abort = await abortLatencies(store, smallN >= 1000 ? 20 : 4, 30);
    return { load, readsOnly, getSession, listFirstPage, abort, readers: size };
  } finally {
    await store.close();
  }
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** Reads off the event loop (#22): the read pool next to in-thread reads, on one copy of the file. */
export const readsScenario: Scenario = {
  name: "reads",
  title: "Reads in a worker pool vs in-thread, under a mixed read/write load",
  description: `The store with its default read pool (min(cores, 4) workers; as a third side, with its writes on a writer thread too) next to the same store reading on its own thread (readers: 0), on a copy of the 1,000,000-message file: ${CLIENTS} concurrent clients loop over the search mix while 1 appender writes (a message every ${APPEND_GAP_MS} ms); the event-loop delay of the store's process (monitorEventLoopDelay, 1 ms resolution), search throughput, and the per-call latency of small reads (getSession, first page of listSessionsRich).`,
  async run(ctx) {
    const data = await ensureDataset(mainDataset(ctx), ctx.dataDir);
    const path = join(ctx.workDir, "reads.db");
    copyFileSync(data.path, path); // the cached data set is never written
    ctx.log("short-CJK side index");
    await buildCjkIndex(path);
    const loadMs = ctx.quick ? 1_500 : 30_000;
    const smallN = ctx.quick ? 200 : 3_000;
    ctx.log("in-thread side");
    const inThread = await runSide(path, 0, loadMs, smallN);
    ctx.log("pool side");
    const pool = await runSide(path, undefined, loadMs, smallN);
    ctx.log("pool + writer thread side");
    const threaded = await runWriterThreadSide(path, loadMs);
    const loop = (s: Side) => ({
      loopP50Ms: round(s.load.loopP50Ms),
      loopP99Ms: round(s.load.loopP99Ms),
      loopMaxMs: round(s.load.loopMaxMs),
      appends: s.load.appends,
    });
    const cases: CaseResult[] = [
      {
        name: `search mix, ${CLIENTS} clients + 1 appender`,
        status: "ok",
        store: pool.load.calls,
        baseline: inThread.load.calls,
        ratio: timeRatio(pool.load.calls, inThread.load.calls),
        extra: {
          ...Object.fromEntries(Object.entries(loop(pool)).map(([k, v]) => [`pool.${k}`, v])),
          ...Object.fromEntries(Object.entries(loop(inThread)).map(([k, v]) => [`inThread.${k}`, v])),
          throughputRatio: round(pool.load.searchesPerSec / inThread.load.searchesPerSec),
        },
      },
      {
        name: `search mix, ${CLIENTS} clients + 1 appender, pool + writer thread`,
        status: "ok",
        store: threaded.calls,
        baseline: inThread.load.calls,
        ratio: timeRatio(threaded.calls, inThread.load.calls),
        extra: {
          "thread.loopP50Ms": round(threaded.loopP50Ms),
          "thread.loopP99Ms": round(threaded.loopP99Ms),
          "thread.loopMaxMs": round(threaded.loopMaxMs),
          "thread.appends": threaded.appends,
          throughputRatio: round(threaded.searchesPerSec / inThread.load.searchesPerSec),
          throughputRatioToPool: round(threaded.searchesPerSec / pool.load.searchesPerSec),
        },
      },
      {
        name: `search mix, ${CLIENTS} clients, reads only`,
        status: "ok",
        store: pool.readsOnly.calls,
        baseline: inThread.readsOnly.calls,
        ratio: timeRatio(pool.readsOnly.calls, inThread.readsOnly.calls),
        extra: {
          "pool.loopP99Ms": round(pool.readsOnly.loopP99Ms),
          "pool.loopMaxMs": round(pool.readsOnly.loopMaxMs),
          "inThread.loopP99Ms": round(inThread.readsOnly.loopP99Ms),
          throughputRatio: round(pool.readsOnly.searchesPerSec / inThread.readsOnly.searchesPerSec),
        },
      },
      {
        name: "getSession",
        status: "ok",
        store: pool.getSession,
        baseline: inThread.getSession,
        ratio: timeRatio(pool.getSession, inThread.getSession),
        extra: { p50OverheadMs: round(pool.getSession.p50Ms - inThread.getSession.p50Ms) },
      },
      {
        name: "listSessionsRich first page",
        status: "ok",
        store: pool.listFirstPage,
        baseline: inThread.listFirstPage,
        ratio: timeRatio(pool.listFirstPage, inThread.listFirstPage),
        extra: { p50OverheadMs: round(pool.listFirstPage.p50Ms - inThread.listFirstPage.p50Ms) },
      },
      {
        name: "abort a long search 30 ms in",
        status: "ok",
        store: pool.abort.figures,
        baseline: inThread.abort.figures,
        ratio: timeRatio(pool.abort.figures, inThread.abort.figures),
        extra: {
          query: LONG_QUERY,
          "pool.aborted": pool.abort.aborted,
          "inThread.aborted": inThread.abort.aborted,
        },
      },
    ];
    ctx.log("write load, synchronous FULL then NORMAL");
    const writesMs = ctx.quick ? 1_000 : 15_000;
    const full = await writeLoad(path, "FULL", 4, writesMs);
    const normal = await writeLoad(path, "NORMAL", 4, writesMs);
    ctx.log("write load on a writer thread, synchronous FULL");
    const fullThread = await writeLoad(path, "FULL", 4, writesMs, "thread");
    cases.push({
      name: "write load, 4 writers (FULL vs NORMAL)",
      status: "ok",
      store: full.commits,
      baseline: normal.commits,
      ratio: timeRatio(full.commits, normal.commits),
      extra: {
        "full.loopP99Ms": round(full.loopP99Ms),
        "full.loopMaxMs": round(full.loopMaxMs),
        "full.checkpoints": full.checkpoints,
        "normal.loopP99Ms": round(normal.loopP99Ms),
        "normal.loopMaxMs": round(normal.loopMaxMs),
        "normal.checkpoints": normal.checkpoints,
      },
    });
    cases.push({
      name: "write load, 4 writers (writer thread vs inline, FULL)",
      status: "ok",
      store: fullThread.commits,
      baseline: full.commits,
      ratio: timeRatio(fullThread.commits, full.commits),
      extra: {
        "thread.loopP99Ms": round(fullThread.loopP99Ms),
        "thread.loopMaxMs": round(fullThread.loopMaxMs),
        "thread.checkpoints": fullThread.checkpoints,
        "inline.loopP99Ms": round(full.loopP99Ms),
        "inline.loopMaxMs": round(full.loopMaxMs),
      },
    });
    return {
      cases,
      notes: [
        `Data set: ${data.messages.toLocaleString("en-US")} messages in ${data.sessions.toLocaleString("en-US")} sessions (a copy; the appender writes into it).`,
        `"ours" is the pool at its default size (readers: ${pool.readers} on this machine), "raw" the same store with readers: 0 (every read on the caller's thread); ratio below 1: the pool is faster per call, throughputRatio above 1: more searches per second.`,
        "Targets (#22): event-loop delay with the pool p99 ≤ 5 ms and max ≤ 25 ms (the mixed case); search throughput ≥ 1.7× in-thread; small reads ≤ 0.15 ms over in-thread at p50.",
        "Reads-only case: the same 4 clients with no appender, so the throughput ratio compares reads with reads (in the mixed case the pool side also does about 100 times the in-thread side's appends, on the same 2 cores).",
        "Abort case: time from abort() to the end of the five-term OR search aborted 30 ms in (pool.aborted / inThread.aborted: how many rejected with ABORTED; the others had answered first). In-thread a query runs to its end before anything else can happen on the thread, so the abort only lands after it.",
        "Write load case: the writes alone (no reads, readers: 0), 4 callers appending 4-message turns back to back; ours synchronous=FULL (the default), raw synchronous=NORMAL; the loop delay is what the write path costs the caller's thread.",
        "The copy's short-CJK side index is built before both sides (as in a store that has run a while), so no side's searches meet its build.",
        "Searches with 1–2-character CJK terms stay on the caller's thread on the pool side (they bring the short-CJK index up to date first, which writes); the appender's writes run on the caller's thread on the pool and in-thread sides.",
        `"Pool + writer thread": the pool side's store with writer: "thread", the mixed load only (the other reads do not write): every write, and every search with short CJK terms (its index catch-up is a write), runs on the writer thread. Its throughputRatio is against the in-thread side, throughputRatioToPool against the pool side.`,
        'Write load on a writer thread: the same 4 writers, synchronous FULL, with writer: "thread"; ours is the writer thread, raw the inline FULL run above.',
      ],
      chart: latencyChart("Reads: pool vs in-thread (log scale)", cases, { log: true }),
      parameters: {
        readers: pool.readers,
        clients: CLIENTS,
        appendGapMs: APPEND_GAP_MS,
        loadMs,
        smallReads: smallN,
        dataset: data.spec,
      },
    };
  },
};
