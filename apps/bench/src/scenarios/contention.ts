import { type ChildProcess, fork } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { summarizeLatencies, timeRatio } from "../latency-summary.js";
import { BASELINE_LABEL, STORE_LABEL, scalingChart } from "../report/render-chart.js";
import type { CaseResult, Scenario } from "../scenario.js";
import type { AppendWorkerReport, AppendWorkerRequest } from "../workers/append-worker.js";

const WRITERS = [1, 2, 4, 8, 16];
/** `--quick` is a smoke test: two levels, few appends (spawning 16 processes alone takes seconds). */
const QUICK_WRITERS = [1, 4];

interface RunResult {
  reports: AppendWorkerReport[];
  wallMs: number;
  maxWalBytes: number;
  rows: number;
  distinct: number;
  counterMismatches: number;
  integrity: string;
}

function walSize(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

/**
 * Starts `writers` processes on one file, releases them together, collects their reports. Each
 * process runs `loops` writers at once, each with a session and messages of its own: 1 process of
 * 8 writers appends the same messages to the same sessions as 8 processes of 1.
 */
async function runWriters(
  mode: AppendWorkerRequest["mode"],
  path: string,
  writers: number,
  count: number,
  seed: number,
  storeOptions?: AppendWorkerRequest["storeOptions"],
  loops = 1,
): Promise<RunResult> {
  const sessionIds = Array.from({ length: writers * loops }, (_, i) => `writer-${i}`);
  const setup = await openSessionStore({ path });
  for (const id of sessionIds) await setup.createSession({ id, source: "bench", model: "bench" });
  await setup.close();

  const children: ChildProcess[] = [];
  const ready: Array<Promise<void>> = [];
  const done: Array<Promise<AppendWorkerReport>> = [];
  for (let w = 0; w < writers; w++) {
    const child = fork(new URL("../workers/append-worker.js", import.meta.url), [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    children.push(child);
    ready.push(new Promise((resolve) => child.once("message", () => resolve())));
    done.push(
      new Promise((resolve, reject) => {
        child.on("message", (m: { type: string }) => {
          if (m.type === "done") resolve(m as AppendWorkerReport);
        });
        child.once("exit", (code) =>
          reject(new Error(`writer ${w} exited with code ${code} before reporting`)),
        );
      }),
    );
    const request: AppendWorkerRequest = {
      mode,
      path,
      sessionIds: sessionIds.slice(w * loops, (w + 1) * loops),
      count,
      seed,
      worker: w,
      loops,
      storeOptions,
    };
    child.send(request);
  }
  await Promise.all(ready);
  let maxWalBytes = walSize(path);
  const sampler = setInterval(() => {
    maxWalBytes = Math.max(maxWalBytes, walSize(path));
  }, 20);
  const t0 = performance.now();
  for (const child of children) child.send({ type: "go" });
  let reports: AppendWorkerReport[];
  try {
    reports = await Promise.all(done);
  } finally {
    clearInterval(sampler);
  }
  const wallMs = performance.now() - t0;
  maxWalBytes = Math.max(maxWalBytes, walSize(path));

  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare("SELECT COUNT(*) FROM messages").pluck().get() as number;
    const distinct = db.prepare("SELECT COUNT(DISTINCT content) FROM messages").pluck().get() as number;
    const counterMismatches = db
      .prepare(
        "SELECT COUNT(*) FROM sessions s WHERE s.message_count != (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)",
      )
      .pluck()
      .get() as number;
    const integrity = String(db.prepare("PRAGMA quick_check").pluck().get());
    return { reports, wallMs, maxWalBytes, rows, distinct, counterMismatches, integrity };
  } finally {
    db.close();
  }
}

/** One level's case: the store's run against the raw baseline's, with the integrity counts. */
function caseOf(name: string, s: RunResult, r: RunResult, expected: number): CaseResult {
  const store = figuresOf(s);
  const baseline = figuresOf(r);
  const errors = s.reports.reduce((a, x) => a + x.errors, 0);
  const elapsed = s.reports.flatMap((x) => x.writerElapsedMs);
  const firstError = s.reports.find((x) => x.firstError !== null)?.firstError ?? null;
  return {
    name,
    status: "ok",
    note: firstError === null ? undefined : `first error: ${firstError}`,
    store,
    baseline,
    ratio: timeRatio(store, baseline),
    extra: {
      rows: s.rows,
      lost: expected - s.distinct,
      duplicated: s.rows - s.distinct,
      errors,
      counterMismatches: s.counterMismatches,
      integrity: s.integrity,
      retries: s.reports.reduce((a, x) => a + x.retries, 0),
      waitedMs: Math.round(s.reports.reduce((a, x) => a + x.waitedMs, 0)),
      handoffs: s.reports.reduce((a, x) => a + x.handoffs, 0),
      deferrals: s.reports.reduce((a, x) => a + x.deferrals, 0),
      commits: s.reports.reduce((a, x) => a + x.commits, 0),
      sharedWrites: s.reports.reduce((a, x) => a + x.sharedWrites, 0),
      maxWalMiB: Math.round((s.maxWalBytes / 2 ** 20) * 10) / 10,
      fairness: Math.round((Math.max(...elapsed) / Math.min(...elapsed)) * 100) / 100,
      eventLoopP99Ms: Math.round(Math.max(...s.reports.map((x) => x.eventLoopP99Ms)) * 10) / 10,
      eventLoopMaxMs: Math.round(Math.max(...s.reports.map((x) => x.eventLoopMaxMs)) * 10) / 10,
    },
  };
}

function figuresOf(run: RunResult) {
  const all = run.reports.flatMap((r) => r.latenciesMs);
  const first = Math.min(...run.reports.map((r) => r.startedAt));
  const last = Math.max(...run.reports.map((r) => r.endedAt));
  return summarizeLatencies(all, last - first);
}

/** N writer processes on one file, against one raw better-sqlite3 process. */
export const contentionScenario: Scenario = {
  name: "contention",
  title: "Writers under contention: 1–16 processes × 2,000 appends",
  description:
    "N writer processes (1, 2, 4, 8, 16) each append their messages one per transaction to one file through the store, released together; next to one process appending the same number of messages with raw better-sqlite3 (BEGIN IMMEDIATE, same pragmas), run right after each level.",
  async run(ctx) {
    const levels = ctx.quick ? QUICK_WRITERS : WRITERS;
    const count = ctx.quick ? 20 : Math.max(50, Math.round(2000 * Math.min(1, ctx.scale)));
    const cases: CaseResult[] = [];
    const points: Array<{ x: number; side: string; opsPerSec: number | null; p99Ms: number | null }> = [];
    for (const writers of levels) {
      const storePath = join(ctx.workDir, `contention-${writers}.db`);
      const rawPath = join(ctx.workDir, `contention-raw-${writers}.db`);
      const order: Array<"store" | "raw"> = writers % 2 === 0 ? ["raw", "store"] : ["store", "raw"];
      let storeRun: RunResult | undefined;
      let rawRun: RunResult | undefined;
      for (const side of order) {
        if (side === "store") storeRun = await runWriters("store", storePath, writers, count, ctx.seed);
        else rawRun = await runWriters("raw", rawPath, 1, count, ctx.seed);
      }
      const s = storeRun!;
      const r = rawRun!;
      const store = figuresOf(s);
      const baseline = figuresOf(r);
      cases.push(caseOf(`writers=${writers}`, s, r, writers * count));
      if (writers === 8 && !ctx.quick) {
        // The same level without group commit across processes (turns only), and with the
        // cross-process queue off altogether, in this run, for the trade-offs.
        const variants = [
          { name: "shareCommits=false", options: { shareCommits: false } },
          { name: "fairWrites=false", options: { fairWrites: false } },
        ];
        for (const variant of variants) {
          const run = await runWriters(
            "store",
            join(ctx.workDir, `contention-8-${variant.name.replace(/=.*/, "")}.db`),
            8,
            count,
            ctx.seed,
            variant.options,
          );
          cases.push(caseOf(`writers=8 ${variant.name}`, run, r, writers * count));
        }
        // The reference for what any cross-process scheme can reach here: 8 writers in one
        // process on one store, where group commit needs no coordination between processes.
        const inOne = await runWriters(
          "store",
          join(ctx.workDir, "contention-8-in-one-process.db"),
          1,
          count,
          ctx.seed,
          undefined,
          8,
        );
        cases.push(caseOf("writers=8 in one process", inOne, r, writers * count));
        // The point of comparison, measured here: 8 processes writing the way the Python
        // original does (its SQL through raw better-sqlite3, its 1 s busy handler and its
        // 20–150 ms sleeps between attempts).
        const reference = await runWriters(
          "reference",
          join(ctx.workDir, "contention-8-reference.db"),
          8,
          count,
          ctx.seed,
        );
        cases.push(caseOf("writers=8 reference algorithm", reference, r, writers * count));
      }
      points.push({ x: writers, side: STORE_LABEL, opsPerSec: store.opsPerSec, p99Ms: store.p99Ms });
      points.push({
        x: writers,
        side: `${BASELINE_LABEL} (1 process)`,
        opsPerSec: baseline.opsPerSec,
        p99Ms: baseline.p99Ms,
      });
      ctx.log(
        `writers=${writers}: ${Math.round(store.opsPerSec)} appends/s (raw 1 process ${Math.round(baseline.opsPerSec)})`,
      );
    }
    const single = cases[0]?.store?.opsPerSec ?? Number.NaN;
    const eight = cases.find((c) => c.name === "writers=8")?.store?.opsPerSec ?? Number.NaN;
    return {
      cases,
      notes: [
        `${count} appends per writer; ours/raw ops/s are aggregate appends per second from the first start to the last end; latencies are per append over all writers.`,
        `Aggregate at N=8 is ${((eight / single) * 100).toFixed(0)}% of the single-process store rate (target ≥ 90%; targets at N=8: p99 ≤ 10 ms, max ≤ 250 ms, no lost or duplicated rows, no errors).`,
        "Writers take turns through the store's cross-process queue (fairWrites, default on): handoffs = commits that woke the oldest waiting process, deferrals = writes that queued behind an older waiter instead of racing for the lock.",
        "A writer that waits for the lock posts its append, and the process holding the lock commits it in its own transaction, with a receipt (shareCommits, default on): commits = transactions committed, sharedWrites = appends committed by another process than their own. The cases 'writers=8 shareCommits=false' (turns only) and 'writers=8 fairWrites=false' (every writer races for the lock) run the same level in this run.",
        "Each writer awaits its append before the next (a closed loop), so the mean latency is N ÷ the aggregate rate: 8 writers at 800 appends/s wait 10 ms on average. Taking turns alone costs a hand-off per append (the woken process is cold, and each commit syncs the WAL); committing several processes' appends in one transaction shares that cost (figures: docs/design/contention.md).",
        "'writers=8 in one process' runs 8 writers at once in a single process on one store, with the same sessions and messages: group commit with no coordination between processes at all, so it bounds what the 8-process case can reach on this machine (its p99 comes from the transactions themselves, mostly from the WAL checkpoints SQLite runs inside COMMIT every 1,000 frames; see docs/design/contention.md, 'Where the targets end on this machine').",
        "fairness = slowest writer's time / fastest writer's; eventLoopP99Ms = the worst writer's event-loop delay p99 (monitorEventLoopDelay, 1 ms resolution).",
        "For comparison, the Python original reaches about 2,200 appends/s at N = 8 with p99 about 3 ms but a worst case of about 2 s on this kind of machine. 'writers=8 reference algorithm' measures that write path in this run: 8 processes running the reference's statements through raw better-sqlite3, each waiting in SQLite's busy handler for up to 1 s and sleeping 20–150 ms between attempts (15 at most), as the Python original does; its retries and waitedMs count those sleeps (time inside the busy handler is not counted).",
      ],
      chart: scalingChart(
        "Writers under contention (aggregate appends/s and p99 per append)",
        "writer processes",
        points,
      ),
      parameters: { writers: levels, appendsPerWriter: count },
    };
  },
};
