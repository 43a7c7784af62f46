import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchOptions } from "../cli-options.js";
import { SCENARIOS } from "../scenarios/index.js";
import { compareMarkdown } from "./compare-report.js";
import { runCompare } from "./run-compare.js";

/** The checkout this bench was built in (`apps/bench/dist/compare/` is four levels down). */
const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

/**
 * `pnpm bench --compare <ref> [--scenario …] [--rounds N] [--json]`: exit 0 when every run
 * reported, 1 when a run failed or a case errored, 2 on bad usage.
 */
export async function compareMain(options: BenchOptions, ref: string): Promise<number> {
  const unknown = options.scenarios.filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length > 0 || options.scenarios.length === 0) {
    process.stderr.write(
      unknown.length > 0
        ? `Unknown scenario(s): ${unknown.join(", ")}\n`
        : "--compare needs the scenarios to run (--scenario a,b): a comparison runs each several times\n",
    );
    return 2;
  }
  const scenarios = SCENARIOS.map((s) => s.name).filter((n) => options.scenarios.includes(n));
  try {
    const result = await runCompare({
      root: ROOT,
      ref,
      scenarios,
      rounds: options.rounds,
      quick: options.quick,
      scale: options.scale,
      seed: options.seed,
      out: resolve(options.out),
      dataDir: resolve(options.dataDir),
      log: (message) => process.stderr.write(`compare: ${message}\n`),
    });
    process.stdout.write(options.json ? `${JSON.stringify(result, null, 2)}\n` : compareMarkdown(result));
    return result.failures.length > 0 ? 1 : 0;
  } catch (error) {
    process.stderr.write(`compare: ${(error as Error).message}\n`);
    return 1;
  }
}
