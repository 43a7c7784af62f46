import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { prepareDatasets, stageRunData } from "./compare-datasets.js";
import { type ComparedReport, compareRounds } from "./compare-figures.js";
import { type CompareResult, compareMarkdown } from "./compare-report.js";
import { type BuildSteps, buildRefWorktree } from "./ref-worktree.js";
import { runSide, stopRunningSides } from "./side-run.js";

/** What `pnpm bench --compare <ref>` was asked. */
export interface CompareRequest {
  /** The checkout measured as "new" (this one), built. */
  readonly root: string;
  /** The git ref measured as "old", built in a temporary worktree. */
  readonly ref: string;
  readonly scenarios: readonly string[];
  readonly rounds: number;
  readonly quick: boolean;
  readonly scale: number;
  readonly seed: number;
  /** Where `compare.json`, `compare.md` and the logs go. */
  readonly out: string;
  /** The data set cache (generated once, copied for every run). */
  readonly dataDir: string;
  /** Install and build steps of the old build (tests); the repository's by default. */
  readonly steps?: BuildSteps;
  readonly log: (message: string) => void;
}

function gitState(root: string): { commit: string | null; dirty: boolean } {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: root,
      encoding: "utf8",
    }).trim();
    const status = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd: root,
      encoding: "utf8",
    });
    return { commit, dirty: status.trim().length > 0 };
  } catch {
    return { commit: null, dirty: false };
  }
}

/**
 * Builds `ref` in a temporary worktree, then runs each scenario on both builds in turn, round
 * after round in one sitting (the build that goes first alternates), each run with fresh copies
 * of the data sets, and compares every figure round by round. The worktree is removed at the end,
 * on failure and on an interrupt.
 */
export async function runCompare(request: CompareRequest): Promise<CompareResult> {
  const { out, dataDir, log } = request;
  mkdirSync(out, { recursive: true });
  mkdirSync(dataDir, { recursive: true });
  const onSignal = () => stopRunningSides();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const worktree = await buildRefWorktree(request.root, request.ref, {
    logFile: join(out, "compare-build.log"),
    steps: request.steps,
    log,
  });
  try {
    await prepareDatasets(request.scenarios, { ...request, log });
    const sides = { old: worktree.dir, new: request.root } as const;
    // reports[side][scenario][round]
    const reports = {
      old: request.scenarios.map(() => [] as ComparedReport[]),
      new: request.scenarios.map(() => [] as ComparedReport[]),
    };
    const loadAverages: CompareResult["loadAverages"] = [];
    const failures: string[] = [];
    const runs = join(out, "compare-runs");
    for (let round = 0; round < request.rounds; round++) {
      const order = round % 2 === 0 ? (["old", "new"] as const) : (["new", "old"] as const);
      for (const [s, scenario] of request.scenarios.entries()) {
        for (const side of order) {
          const load = Math.round(loadavg()[0]! * 100) / 100;
          loadAverages.push({ round, side, scenario, load });
          log(`round ${round + 1}/${request.rounds}: ${scenario} on ${side} (load ${load})`);
          const runDir = join(runs, `${side}-${round}`);
          const report = await runSide({
            root: sides[side],
            scenario,
            quick: request.quick,
            scale: request.scale,
            seed: request.seed,
            out: runDir,
            dataDir: stageRunData(dataDir, join(runDir, "data")),
            logFile: join(out, `compare-${side}.log`),
          });
          rmSync(join(runDir, "data"), { recursive: true, force: true });
          if (report.status === "error") failures.push(`${side}, round ${round + 1}, ${scenario}`);
          reports[side][s]![round] = report;
        }
      }
    }
    const figures = request.scenarios.flatMap((_, s) => compareRounds(reports.old[s]!, reports.new[s]!));
    const result: CompareResult = {
      old: { ref: request.ref, commit: worktree.commit },
      new: gitState(request.root),
      scenarios: [...request.scenarios],
      rounds: request.rounds,
      quick: request.quick,
      scale: request.scale,
      seed: request.seed,
      loadAverages,
      failures,
      figures,
    };
    writeFileSync(join(out, "compare.json"), `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(join(out, "compare.md"), compareMarkdown(result));
    return result;
  } finally {
    worktree.remove();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
