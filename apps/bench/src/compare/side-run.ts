import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ComparedReport } from "./compare-figures.js";

/** What one run of one build measures: a scenario, as `pnpm bench` would run it there. */
export interface SideRun {
  /** The checkout whose `apps/bench/dist/main.js` runs (each build measures with its own bench). */
  readonly root: string;
  readonly scenario: string;
  readonly quick: boolean;
  readonly scale: number;
  readonly seed: number;
  readonly out: string;
  readonly dataDir: string;
  /** The run's stdout and stderr are appended here. */
  readonly logFile: string;
}

const running = new Set<ChildProcess>();

/** Ends the runs under way, with their scenario and writer processes (on an interrupt, before the worktree goes). */
export function stopRunningSides(): void {
  for (const child of running) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGTERM");
    } catch {
      child.kill("SIGTERM");
    }
  }
}

/** Runs one scenario on one build in a child process and reads the JSON report it wrote. */
export function runSide(run: SideRun): Promise<ComparedReport> {
  const args = [
    join(run.root, "apps/bench/dist/main.js"),
    "--scenario",
    run.scenario,
    "--out",
    run.out,
    "--data",
    run.dataDir,
    "--seed",
    String(run.seed),
  ];
  if (run.quick) args.push("--quick");
  args.push("--scale", String(run.scale));
  return new Promise((resolve, reject) => {
    const log = createWriteStream(run.logFile, { flags: "a" });
    log.write(`\n$ node ${args.join(" ")}\n`);
    // A process group of its own, so that an interrupt ends the scenario's processes with it.
    const child = spawn(process.execPath, args, {
      cwd: run.root,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    running.add(child);
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      running.delete(child);
      log.end(() => {
        try {
          // Exit code 1 means some case failed; the report says which, and the comparison shows it.
          const report = JSON.parse(readFileSync(join(run.out, `${run.scenario}.json`), "utf8"));
          resolve(report as ComparedReport);
        } catch {
          reject(
            new Error(
              `${run.scenario} on ${run.root} wrote no report (${signal ?? `exit ${code}`}); see ${run.logFile}`,
            ),
          );
        }
      });
    });
  });
}
