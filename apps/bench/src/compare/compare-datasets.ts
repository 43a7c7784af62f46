import { constants, copyFileSync, mkdirSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { forkDataset, mainDataset, resumeDataset } from "../data/datasets.js";
import { type DatasetSpec, ensureDataset } from "../data/ensure-dataset.js";
import type { ScenarioContext } from "../scenario.js";

/** The cached data sets each scenario reads (the others create their files as they run). */
const DATASETS: Record<string, Array<(ctx: ScenarioContext) => DatasetSpec>> = {
  resume: [resumeDataset],
  list: [mainDataset],
  "change-feed": [mainDataset],
  search: [mainDataset],
  "cjk-build": [mainDataset],
  reads: [mainDataset],
  export: [mainDataset],
  fork: [forkDataset],
  migrate: [(ctx) => mainDataset(ctx, "v10")],
  postgres: [mainDataset],
  web: [mainDataset],
};

/**
 * Generates, once and before any round, the data sets the scenarios read, into `dataDir` (the
 * bench's cache, shared with `pnpm bench`). They are written by this build's generator, never
 * opened by a store afterwards: each run gets copies ({@link stageRunData}).
 */
export async function prepareDatasets(
  scenarios: readonly string[],
  ctx: Pick<ScenarioContext, "scale" | "quick" | "seed" | "dataDir" | "log">,
): Promise<void> {
  const context = { ...ctx, workDir: ctx.dataDir };
  for (const scenario of scenarios) {
    for (const spec of DATASETS[scenario] ?? []) await ensureDataset(spec(context), ctx.dataDir);
  }
}

/**
 * A data folder for one run: a copy of every cached file of `dataDir` (a copy-on-write clone
 * where the file system has them), so that no run sees a file an earlier run's store wrote to
 * (an index it built, pages it checkpointed); folders (PostgreSQL clusters) are linked, not
 * copied. A data set the other build's generator names differently is generated inside the run
 * folder and goes with it.
 */
export function stageRunData(dataDir: string, runDir: string): string {
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(runDir, { recursive: true });
  for (const entry of readdirSync(dataDir, { withFileTypes: true })) {
    if (entry.name === "work") continue;
    const from = join(dataDir, entry.name);
    const to = join(runDir, entry.name);
    if (entry.isDirectory()) symlinkSync(from, to, "dir");
    else if (entry.isFile() && !entry.name.includes(".tmp-"))
      copyFileSync(from, to, constants.COPYFILE_FICLONE);
  }
  return runDir;
}
