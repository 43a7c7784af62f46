import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setImmediate as nextTurn, setTimeout as sleep } from "node:timers/promises";
import type { SqliteStoreStats } from "@hermes/core";
import type { SqlExecutor } from "@hermes/schema";
import { catchUpCjkIndex, dropCjkIndex } from "@hermes/search";
import { openSessionStore, type SessionStore } from "@hermes/store";
import type Database from "better-sqlite3";
import { mainDataset } from "../data/datasets.js";
import { ensureDataset } from "../data/ensure-dataset.js";
import { type Figures, summarizeLatencies, timeRatio } from "../latency-summary.js";
import { openRawConnection } from "../raw-connection.js";
import { latencyChart } from "../report/render-chart.js";
import type { CaseResult, Scenario } from "../scenario.js";

const TERM = "桂林";
/** Pause of the appender between two appends, in ms (an agent writing beside the build). */
const APPEND_EVERY_MS = 10;

/** What one way of building measured. */
interface BuildRun {
  firstSearchMs: number;
  firstSearchHits: number;
  buildMs: number;
  loopDelay: Figures;
  appends: Figures;
  searchAfter: Figures;
  /** Whether the first answer (a scan, after) equals the answer once the index is ready. */
  hitsEqual: boolean;
}

/** better-sqlite3 as the search package's executor. */
function executor(db: Database.Database): SqlExecutor {
  return {
    exec: (sql) => void db.exec(sql),
    all: <T>(sql: string, params: readonly unknown[] = []) => db.prepare(sql).all(...params) as T[],
    get: <T>(sql: string, params: readonly unknown[] = []) => db.prepare(sql).get(...params) as T | undefined,
    run: (sql, params = []) => ({ changes: db.prepare(sql).run(...params).changes }),
  };
}

/** A copy of the data set without the short-CJK index (as the agent's file before our first search). */
function freshCopy(source: string, dir: string, name: string): string {
  const path = join(dir, `${name}.db`);
  copyFileSync(source, path);
  const db = openRawConnection(path);
  dropCjkIndex(executor(db));
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return path;
}

/**
 * Event-loop delay figures of a histogram (ms). "ops/s" is one over the mean delay, so the ratio
 * column compares mean delays.
 */
function loopFigures(h: ReturnType<typeof monitorEventLoopDelay>): Figures {
  const meanMs = h.mean / 1e6;
  return {
    n: h.count,
    p50Ms: h.percentile(50) / 1e6,
    p99Ms: h.percentile(99) / 1e6,
    maxMs: h.max / 1e6,
    meanMs,
    opsPerSec: meanMs > 0 ? 1000 / meanMs : Number.NaN,
  };
}

/**
 * Appends {@link APPEND_EVERY_MS} ms after the last one resolved, until `done()`; resolves with
 * each append's latency as the agent sees it: from when its timer was due (a blocked event
 * loop delays it) until it resolved.
 */
async function appender(store: SessionStore, done: () => boolean): Promise<number[]> {
  await store.createSession({ id: "cjk-build-appender", source: "cli" });
  const latencies: number[] = [];
  for (let i = 0; !done(); i++) {
    const due = performance.now() + APPEND_EVERY_MS;
    await sleep(APPEND_EVERY_MS);
    await store.appendMessage({ sessionId: "cjk-build-appender", role: "user", content: `新消息 ${i}` });
    latencies.push(performance.now() - due);
  }
  return latencies;
}

async function searchTimes(store: SessionStore, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await store.searchMessages(TERM, { limit: 20 });
    out.push(performance.now() - t);
  }
  return out;
}

/**
 * Before: the build as the store ran it until now, on the caller's thread: the same catch-up
 * (2,000 messages per write transaction), the event loop getting a turn between transactions.
 * The store (index `off`, so it only appends and reads) writes beside it.
 */
async function inlineBuild(path: string): Promise<BuildRun> {
  const store = await openSessionStore({ path, cjkIndex: "off" });
  const raw = openRawConnection(path, { busyTimeoutMs: 5 });
  const db = executor(raw);
  const h = monitorEventLoopDelay({ resolution: 1 });
  try {
    let building = true;
    h.enable();
    const appends = appender(store, () => !building);
    await sleep(50);
    const t = performance.now();
    const catchUp = () =>
      catchUpCjkIndex(db, async (_label, fn) => {
        await nextTurn();
        return raw.transaction(fn).immediate();
      });
    await catchUp();
    building = false;
    const appendLatencies = await appends;
    // What the appender wrote meanwhile, applied as the search applied it: then the answer.
    await catchUp();
    const hits = await store.searchMessages(TERM, { limit: 20 });
    const firstSearchMs = performance.now() - t;
    h.disable();
    const after = await searchTimes(store, 10); // the index is current: the store ("off") uses it
    return {
      firstSearchMs,
      firstSearchHits: hits.length,
      buildMs: firstSearchMs,
      loopDelay: loopFigures(h),
      appends: summarizeLatencies(appendLatencies),
      searchAfter: summarizeLatencies(after),
      hitsEqual: true,
    };
  } finally {
    raw.close();
    await store.close();
  }
}

/** After: the first search scans and starts the build on the store's worker thread. */
async function workerBuild(path: string): Promise<BuildRun> {
  const store = await openSessionStore({ path });
  const h = monitorEventLoopDelay({ resolution: 1 });
  try {
    const cjk = () => (store.stats() as SqliteStoreStats).sideIndexes.cjk;
    let building = true;
    const appends = appender(store, () => !building);
    await sleep(50);
    const t = performance.now();
    const hits = await store.searchMessages(TERM, { limit: 20 });
    const firstSearchMs = performance.now() - t;
    // The build's own cost to the caller: from the first answer until the index is ready.
    h.enable();
    while (cjk().active) await sleep(20);
    const buildMs = performance.now() - t;
    h.disable();
    building = false;
    const appendLatencies = await appends;
    const after = await searchTimes(store, 10);
    const again = (await store.searchMessages(TERM, { limit: 20 })).map((x) => x.id);
    // The appender's messages came after the scan's answer and contain no 桂林: same page.
    return {
      firstSearchMs,
      firstSearchHits: hits.length,
      buildMs,
      loopDelay: loopFigures(h),
      appends: summarizeLatencies(appendLatencies),
      searchAfter: summarizeLatencies(after),
      hitsEqual: hits.map((x) => x.id).join(",") === again.join(",") && cjk().state === "ready",
    };
  } finally {
    await store.close();
  }
}

function figuresOf(ms: number): Figures {
  return summarizeLatencies([ms]);
}

/** Building the short-CJK index on a file that has none: on the caller's thread (before) or a worker (after). */
export const cjkBuildScenario: Scenario = {
  name: "cjk-build",
  title: "Short-CJK index: first build off the caller's thread",
  description:
    "The first searchMessages('桂林') on a file without the short-CJK index, with an appender writing every 10 ms (its latency counted from when its timer was due): the store's build on its worker thread (the search scans meanwhile) next to the build as it ran until now on the caller's thread (same catch-up, 2,000 messages per transaction). Event-loop delay in the caller, build time, first-search latency, append latency during the build, search latency once ready.",
  async run(ctx) {
    const data = await ensureDataset(mainDataset(ctx), ctx.dataDir);
    ctx.log("copying the data set twice (no short-CJK index)");
    const before = freshCopy(data.path, ctx.workDir, "inline");
    const after = freshCopy(data.path, ctx.workDir, "worker");
    ctx.log("building inline (before)");
    const inline = await inlineBuild(before);
    ctx.log("building on the worker thread (after)");
    const worker = await workerBuild(after);
    const row = (
      name: string,
      store: Figures,
      baseline: Figures,
      extra?: CaseResult["extra"],
    ): CaseResult => ({
      name,
      status: "ok",
      store,
      baseline,
      ratio: timeRatio(store, baseline),
      extra: { baselineMaxMs: Math.round(baseline.maxMs * 10) / 10, ...extra },
    });
    const cases: CaseResult[] = [
      row(
        "first search (until the first answer)",
        figuresOf(worker.firstSearchMs),
        figuresOf(inline.firstSearchMs),
        {
          hits: worker.firstSearchHits,
          baselineHits: inline.firstSearchHits,
        },
      ),
      row("build until ready", figuresOf(worker.buildMs), figuresOf(inline.buildMs)),
      row("event-loop delay during the build", worker.loopDelay, inline.loopDelay),
      row("appendMessage during the build", worker.appends, inline.appends),
      row("search once ready", worker.searchAfter, inline.searchAfter, {
        sameHitsAsDuringBuild: worker.hitsEqual,
      }),
    ];
    return {
      cases,
      notes: [
        `Data set: ${data.messages.toLocaleString("en-US")} messages (${data.cjkMessages.toLocaleString("en-US")} CJK) in ${data.sessions.toLocaleString("en-US")} sessions.`,
        "store = the build on the store's worker thread (transactions of about 10 ms); baseline = the same catch-up on the caller's thread, 2,000 messages per transaction, as the store ran it before.",
        "After: the first search answers by the reference's LIKE scan, on the caller's thread until the read pool takes reads off it; its time is the scan's, and the appends due meanwhile wait for it (their max). Event-loop delay is measured from that answer until the index is ready (before: from the first search until its answer, which waits for the build).",
        "Target (#22): the build never freezes the caller's event loop for long; searches during it give the same hits as after it.",
      ],
      chart: latencyChart("Short-CJK build: caller-side figures", cases, { log: true }),
      parameters: { term: TERM, appendEveryMs: APPEND_EVERY_MS, dataset: data.spec },
    };
  },
};
