import { fork } from "node:child_process";
import { mainDataset } from "../data/datasets.js";
import { ensureDataset } from "../data/ensure-dataset.js";
import { type Figures, summarizeLatencies, timeRatio } from "../latency-summary.js";
import { latencyChart } from "../report/render-chart.js";
import type { CaseResult, Scenario } from "../scenario.js";
import type { ExportMode, ExportWorkerReport } from "../workers/export-worker.js";

function runExport(mode: ExportMode, path: string): Promise<ExportWorkerReport> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL("../workers/export-worker.js", import.meta.url), [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let report: ExportWorkerReport | undefined;
    child.on("message", (m: ExportWorkerReport) => {
      report = m;
    });
    child.once("exit", (code) =>
      report ? resolve(report) : reject(new Error(`export worker exited with code ${code}`)),
    );
    child.send({ mode, path });
  });
}

/** Streaming export of 1,000,000 messages, each side in its own process. */
export const exportScenario: Scenario = {
  name: "export",
  title: "Streaming export of 1,000,000 messages",
  description:
    "exportStream() over every session of the 1,000,000-message file in a child process (in-thread, then from a warm read worker), each session serialized as a JSONL line; next to a raw better-sqlite3 export in its own child process (a cursor over sessions, one query per session for its messages). Rate, per-session latency and the process's peak RSS.",
  async run(ctx) {
    const data = await ensureDataset(mainDataset(ctx), ctx.dataDir);
    const reps = 1;
    const runs: Record<ExportMode, ExportWorkerReport[]> = { store: [], pool: [], raw: [] };
    for (let rep = 0; rep < reps; rep++) {
      const order: ExportMode[] = ["store", "pool", "raw"];
      for (const mode of rep % 2 === 0 ? order : order.reverse()) {
        const r = await runExport(mode, data.path);
        runs[mode].push(r);
        ctx.log(
          `${mode}: ${r.type === "done" ? `${(r.elapsedMs / 1000).toFixed(1)} s, peak RSS ${r.peakRssMb} MB` : r.reason}`,
        );
      }
    }
    const summarize = (
      reports: ExportWorkerReport[],
    ): { figures: Figures | null; rss: number; bytes: number; problem: ExportWorkerReport | undefined } => {
      const done = reports.filter((r) => r.type === "done");
      const problem = reports.find((r) => r.type !== "done");
      if (done.length === 0 || problem !== undefined)
        return { figures: null, rss: Math.max(...reports.map((r) => r.peakRssMb)), bytes: 0, problem };
      const elapsed = done.reduce((a, r) => a + r.elapsedMs, 0);
      const latencies = done.flatMap((r) => r.itemLatenciesMs);
      const f = summarizeLatencies(latencies, elapsed);
      // Throughput in messages per second (the unit the issue asks for), not sessions.
      f.opsPerSec = (data.messages * done.length * 1000) / elapsed;
      return { figures: f, rss: Math.max(...done.map((r) => r.peakRssMb)), bytes: done[0]!.bytes, problem };
    };
    const r = summarize(runs.raw);
    if (r.figures === null) throw new Error(`raw export failed: ${JSON.stringify(r.problem)}`);
    const raw = r.figures;
    const side = (name: string, reports: ExportWorkerReport[]): CaseResult => {
      const s = summarize(reports);
      return {
        name,
        status: s.problem === undefined ? "ok" : s.problem.type === "unavailable" ? "unavailable" : "error",
        note: s.problem !== undefined && s.problem.type !== "done" ? s.problem.reason : undefined,
        store: s.figures,
        baseline: raw,
        ratio: timeRatio(s.figures, raw),
        extra: {
          messages: data.messages,
          storePeakRssMb: s.figures === null ? null : s.rss,
          rawPeakRssMb: r.rss,
          storeSeconds:
            s.figures === null ? null : Math.round((data.messages / s.figures.opsPerSec) * 10) / 10,
          rawSeconds: Math.round((data.messages / raw.opsPerSec) * 10) / 10,
          jsonlMiB: Math.round((r.bytes / 2 ** 20) * 10) / 10,
        },
      };
    };
    const cases = [
      side("exportStream (all sessions)", runs.store),
      side("exportStream from a read worker (all sessions)", runs.pool),
    ];
    return {
      cases,
      notes: [
        `${data.sessions.toLocaleString("en-US")} sessions, ${data.messages.toLocaleString("en-US")} messages; ${reps} run(s) per side, each in a fresh process. The first side opens the store and exports at once (the export runs on the caller's thread: no worker is ready yet); the second warms its read worker first, so the export streams from it.`,
        "ops/s is messages per second; p50/p99/max are per exported session (time between consecutive sessions, serialization included). Target (issue 6): peak RSS under 200 MB.",
      ],
      chart: latencyChart("Streaming export: time per session", cases),
      parameters: { repetitions: reps, dataset: data.spec },
    };
  },
};
