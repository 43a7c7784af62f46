import { type ChildProcess, fork, spawn } from "node:child_process";
import { closeSync, copyFileSync, openSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { backupTo } from "@hermes/store";
import Database from "better-sqlite3";
import { mainDataset } from "../data/datasets.js";
import { ensureDataset } from "../data/ensure-dataset.js";
import { summarizeLatencies, timeRatio } from "../latency-summary.js";
import { latencyChart } from "../report/render-chart.js";
import type { CaseResult, Scenario, ScenarioContext } from "../scenario.js";
import type { SteadyAppendReport, SteadyAppendRequest } from "../workers/steady-append-worker.js";

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A raw `VACUUM INTO` of the file on a connection of its own (closed after: no -wal left), in ms. */
function vacuumInto(source: string, dest: string): number {
  rmSync(dest, { force: true });
  const db = new Database(source, { fileMustExist: true });
  const t0 = performance.now();
  db.prepare("VACUUM INTO ?").run(dest);
  const ms = performance.now() - t0;
  db.close();
  rmSync(dest, { force: true });
  return ms;
}

/** `gzip -1 -c` of the file into another, in ms; `null` where there is no gzip. */
async function plainGzip(path: string, out: string): Promise<number | null> {
  const fd = openSync(out, "w");
  const t0 = performance.now();
  try {
    return await new Promise<number | null>((resolve) => {
      const child = spawn("gzip", ["-1", "-c", path], { stdio: ["ignore", fd, "ignore"] });
      child.once("error", () => resolve(null));
      child.once("exit", (code) => resolve(code === 0 ? performance.now() - t0 : null));
    });
  } finally {
    closeSync(fd);
    rmSync(out, { force: true });
  }
}

/** Writers appending every `intervalMs` in their own processes, until stopped. */
async function startWriters(
  path: string,
  modes: ReadonlyArray<SteadyAppendRequest["mode"]>,
  intervalMs: number,
): Promise<() => Promise<SteadyAppendReport[]>> {
  const children: ChildProcess[] = [];
  const reports: Array<Promise<SteadyAppendReport>> = [];
  const ready: Array<Promise<void>> = [];
  modes.forEach((mode, i) => {
    const child = fork(new URL("../workers/steady-append-worker.js", import.meta.url), [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    children.push(child);
    ready.push(new Promise((resolve) => child.once("message", () => resolve())));
    reports.push(
      new Promise((resolve, reject) => {
        child.on("message", (m: { type: string }) => {
          if (m.type === "done") resolve(m as SteadyAppendReport);
        });
        child.once("exit", (code) =>
          reject(new Error(`writer ${i} exited with code ${code} before reporting`)),
        );
      }),
    );
    const request: SteadyAppendRequest = { mode, path, sessionId: `steady-${i}`, intervalMs, seed: 7 + i };
    child.send(request);
  });
  await Promise.all(ready);
  return async () => {
    for (const c of children) c.send({ type: "stop" });
    return Promise.all(reports);
  };
}

/** Latencies of the writes that were under way at some point of `[from, to]`, and of the others. */
function split(reports: readonly SteadyAppendReport[], from: number, to: number) {
  const inside: number[] = [];
  const outside: number[] = [];
  for (const r of reports) {
    for (const [at, ms] of r.writes) (at + ms >= from && at <= to ? inside : outside).push(ms);
  }
  return { inside, outside };
}

/** Case 1: the snapshot step of backupTo next to a raw VACUUM INTO of the same quiescent file. */
async function snapshotCase(
  ctx: ScenarioContext,
  source: string,
  reps: number,
  held: boolean,
): Promise<CaseResult> {
  const ours: number[] = [];
  const raw: number[] = [];
  const backups = join(ctx.workDir, "snapshots");
  let method = "";
  // A connection left open (idle) keeps the -wal: backupTo then takes SQLite's online backup
  // instead of copying an idle file.
  const holder = held ? new Database(source) : null;
  holder?.prepare("SELECT count(*) FROM sessions").get();
  try {
    for (let rep = 0; rep < reps; rep++) {
      const oursFirst = rep % 2 === 0;
      if (!oursFirst) raw.push(vacuumInto(source, join(ctx.workDir, "vacuum.db")));
      const r = await backupTo(backups, { source, keep: 1 });
      ours.push(r.manifest.timings.snapshotMs);
      method = r.manifest.snapshot.method;
      if (oursFirst) raw.push(vacuumInto(source, join(ctx.workDir, "vacuum.db")));
      ctx.log(`snapshot (${method}): ${ours.at(-1)} ms; VACUUM INTO ${round(raw.at(-1) ?? 0)} ms`);
    }
  } finally {
    holder?.close();
    rmSync(backups, { recursive: true, force: true });
  }
  const store = summarizeLatencies(ours);
  const baseline = summarizeLatencies(raw);
  return {
    name: held ? "snapshot, file open in WAL (online backup)" : "snapshot, idle file",
    status: "ok",
    store,
    baseline,
    ratio: timeRatio(store, baseline),
    extra: { method, fileMiB: round(statSync(source).size / 2 ** 20), target: "≤ 1.2× VACUUM INTO" },
  };
}

/** Case 2: backupTo's gzip of the snapshot next to `gzip -1` of the same bytes. */
async function compressionCase(ctx: ScenarioContext, source: string, reps: number): Promise<CaseResult> {
  const ours: number[] = [];
  const raw: number[] = [];
  let bytes = 0;
  let archiveBytes = 0;
  const backups = join(ctx.workDir, "compress");
  for (let rep = 0; rep < reps; rep++) {
    // An idle WAL file is copied byte for byte: the snapshot holds the same bytes as `source`.
    const r = await backupTo(backups, { source, keep: 1 });
    ours.push(r.manifest.timings.compressMs);
    bytes = r.manifest.snapshot.bytes;
    archiveBytes = r.manifest.archiveBytes;
    const g = await plainGzip(source, join(ctx.workDir, "plain.gz"));
    if (g !== null) raw.push(g);
    ctx.log(`gzip: ours ${ours.at(-1)} ms, gzip -1 ${g === null ? "n/a" : round(g)} ms`);
  }
  rmSync(backups, { recursive: true, force: true });
  const store = summarizeLatencies(ours);
  const baseline = raw.length > 0 ? summarizeLatencies(raw) : null;
  const mbps = (ms: number) => round(bytes / 2 ** 20 / (ms / 1000));
  return {
    name: "gzip of the snapshot",
    status: "ok",
    ...(baseline === null ? { note: "no gzip on this machine: no baseline" } : {}),
    store,
    baseline,
    ratio: timeRatio(store, baseline),
    extra: {
      snapshotMiB: round(bytes / 2 ** 20),
      archiveMiB: round(archiveBytes / 2 ** 20),
      oursMiBps: mbps(store.meanMs),
      gzipMiBps: baseline === null ? null : mbps(baseline.meanMs),
      rateVsGzip: baseline === null ? null : round(baseline.meanMs / store.meanMs, 2),
      target: "rate ≥ 0.8× gzip -1",
    },
  };
}

/**
 * Case 3: the agent's appends (the reference's write path, one every 10 ms) for `windowMs`
 * without a backup, then for `windowMs` with backups running back to back.
 */
async function appendCase(
  ctx: ScenarioContext,
  source: string,
  mode: "wal" | "delete",
  windowMs: number,
): Promise<CaseResult> {
  const path = join(ctx.workDir, `append-${mode}.db`);
  copyFileSync(source, path);
  if (mode === "delete") {
    const db = new Database(path);
    db.pragma("journal_mode = DELETE");
    db.close();
  }
  const stop = await startWriters(path, ["reference"], 10);
  const quietFrom = Date.now();
  await sleep(windowMs);
  const busyFrom = Date.now();
  let backups = 0;
  let snapshotMs = 0;
  const dir = join(ctx.workDir, `append-${mode}-backups`);
  while (Date.now() - busyFrom < windowMs || backups === 0) {
    const r = await backupTo(dir, { source: path, keep: 1 });
    backups++;
    snapshotMs = Math.max(snapshotMs, r.manifest.timings.snapshotMs);
  }
  const busyTo = Date.now();
  const reports = await stop();
  rmSync(dir, { recursive: true, force: true });
  const during = split(reports, busyFrom, busyTo).inside;
  const quiet = split(reports, quietFrom, busyFrom - 1).inside;
  const store = summarizeLatencies(during);
  const baseline = summarizeLatencies(quiet);
  ctx.log(
    `append ${mode}: p99 ${round(store.p99Ms)} ms during ${backups} backup(s), ${round(baseline.p99Ms)} ms without`,
  );
  return {
    name: `agent append, ${mode === "wal" ? "WAL" : "rollback journal"}: during backups (ours) vs none (baseline)`,
    status: reports.some((r) => r.errors > 0) ? "error" : "ok",
    ...(reports.some((r) => r.errors > 0)
      ? { note: reports.find((r) => r.firstError)?.firstError ?? "" }
      : {}),
    store,
    baseline,
    ratio: timeRatio(store, baseline),
    extra: {
      backups,
      largestSnapshotMs: snapshotMs,
      p99DuringMs: round(store.p99Ms),
      p99WithoutMs: round(baseline.p99Ms),
    },
  };
}

/** Case 4: the largest write stall of three writers (the store, two reference) during one backup. */
async function stallCase(ctx: ScenarioContext, path: string, messages: number): Promise<CaseResult> {
  const stop = await startWriters(path, ["store", "reference", "reference"], 10);
  await sleep(500);
  const from = Date.now();
  const r = await backupTo(join(ctx.workDir, "stall-backups"), { source: path });
  const to = Date.now();
  await sleep(500);
  const reports = await stop();
  const { inside, outside } = split(reports, from, to);
  const store = summarizeLatencies(inside);
  const baseline = summarizeLatencies(outside);
  const errors = reports.reduce((n, x) => n + x.errors, 0);
  const worst = reports.map((x, i) => {
    const during = split([x], from, to).inside;
    return `${i === 0 ? "store" : "reference"} ${round(Math.max(0, ...during))}`;
  });
  ctx.log(`stall: ${round(store.maxMs)} ms largest during a ${to - from} ms backup of ${messages} messages`);
  return {
    name: `3 writers, largest stall during one backup (${messages.toLocaleString("en-US")} messages)`,
    status: errors > 0 ? "error" : "ok",
    ...(errors > 0 ? { note: reports.find((x) => x.firstError)?.firstError ?? "" } : {}),
    store,
    baseline,
    ratio: timeRatio(store, baseline),
    extra: {
      largestStallMs: round(store.maxMs),
      backupMs: to - from,
      snapshotMs: r.manifest.timings.snapshotMs,
      writerErrors: errors,
      stallByWriterMs: worst.join(" / "),
      target: "≤ 100 ms on 200,000 messages",
    },
  };
}

/** Backups of the 1,000,000-message file: snapshot, compression, and what the agent's appends pay. */
export const backupScenario: Scenario = {
  name: "backup",
  title: "backupTo on a 1,000,000-message file",
  description:
    "backupTo(): its snapshot next to a raw better-sqlite3 VACUUM INTO of the same quiescent file (idle, and held open in WAL), its gzip next to `gzip -1` of the same bytes, the agent's append latency (the reference's write path, one append every 10 ms) with and without backups running in WAL and rollback-journal mode, and the largest stall of three writers (store + reference) during one backup of the 200,000-message file.",
  async run(ctx) {
    const data = await ensureDataset(mainDataset(ctx), ctx.dataDir);
    const source = join(ctx.workDir, "backup-source.db");
    copyFileSync(data.path, source);
    const reps = 3;
    const windowMs = ctx.quick ? 1500 : 10_000;
    const small = Math.max(1000, Math.round(200_000 * ctx.scale));
    const stallData = await ensureDataset(
      {
        ...mainDataset(ctx),
        name: "stall",
        sessions: Math.max(100, Math.round(20_000 * ctx.scale)),
        messages: small,
      },
      ctx.dataDir,
    );
    const stallPath = join(ctx.workDir, "stall.db");
    copyFileSync(stallData.path, stallPath);
    const cases: CaseResult[] = [
      await snapshotCase(ctx, source, reps, false),
      await snapshotCase(ctx, source, reps, true),
      await compressionCase(ctx, source, reps),
      await appendCase(ctx, source, "wal", windowMs),
      await appendCase(ctx, source, "delete", windowMs),
      await stallCase(ctx, stallPath, stallData.messages),
    ];
    return {
      cases,
      notes: [
        `${data.sessions.toLocaleString("en-US")} sessions, ${data.messages.toLocaleString("en-US")} messages (${round(data.fileBytes / 2 ** 20)} MiB); ${reps} backups per snapshot case, alternating with the baseline.`,
        "Snapshot: ours is backupTo's snapshot step alone (an idle WAL file is copied as it is; a file held open is copied by SQLite's online backup in one step on a thread), the baseline a raw VACUUM INTO. Compression: ours is Node's zlib gzip level 1, streamed with sha256 on both sides; the baseline `gzip -1 -c` of the same bytes.",
        "Append cases: ours = the agent's appends while backups run back to back, baseline = the same writer's appends in the quiet window before. In rollback-journal mode the snapshot holds a shared lock for its whole duration: appends wait for it (the reference's 1 s busy handler absorbs it).",
      ],
      chart: latencyChart("Backups: snapshot, gzip, and append latency during backups", cases, { log: true }),
      parameters: { repetitions: reps, windowMs, dataset: data.spec, stallDataset: stallData.spec },
    };
  },
};
