import { parseArgs } from "node:util";

/** Options of `pnpm bench`. */
export interface BenchOptions {
  quick: boolean;
  /** Scenario names to run, in the registry's order; empty: all. */
  scenarios: string[];
  /** Fraction of the full sizes. */
  scale: number;
  out: string;
  dataDir: string;
  seed: number;
  help: boolean;
  /** `--compare <ref>`: run the scenarios alternately on this build and on `ref`'s. */
  compare: string | undefined;
  /** Rounds of a comparison (each runs every chosen scenario once on each build). */
  rounds: number;
  /** Print the comparison as JSON on stdout instead of its table. */
  json: boolean;
}

/** The `--help` text. */
export const USAGE = `Usage: pnpm bench [options]   (node apps/bench/dist/main.js)

  --quick            every scenario at a small scale (about a minute; a smoke test)
  --scenario a,b     only these scenarios (append, list, resume, search, cjk-build,
                     contention, group-commit, migrate, export, fork, postgres, web,
                     change-feed, change-capture)
  --scale N          fraction of the full sizes (default 1; --quick uses 0.01)
  --out DIR          results directory (default bench-results/)
  --data DIR         cache of generated data sets (default bench-data/)
  --seed N           seed of the generated data (default 42)
  --compare REF      build the git ref REF in a temporary worktree and run the chosen
                     scenarios on both builds in turn, in one sitting; print each figure's
                     ratio new/old with its spread over the rounds (the step before merging
                     a change to a read or write path; see docs/performance.md)
  --rounds N         rounds of --compare (default 3)
  --json             with --compare: print the comparison as JSON instead of the table
                     (<out>/compare.json and compare.md are written either way)
  -h, --help         this text
`;

/** Parses the command line; throws with a one-line message on bad input. */
export function parseCliOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      scenario: { type: "string", multiple: true },
      scale: { type: "string" },
      out: { type: "string", default: "bench-results" },
      data: { type: "string", default: "bench-data" },
      seed: { type: "string", default: "42" },
      help: { type: "boolean", short: "h", default: false },
      compare: { type: "string" },
      rounds: { type: "string", default: "3" },
      json: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const scale = values.scale === undefined ? (values.quick ? 0.01 : 1) : Number(values.scale);
  if (!Number.isFinite(scale) || scale <= 0 || scale > 10)
    throw new Error(`--scale must be a number in (0, 10], got ${values.scale}`);
  const seed = Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0)
    throw new Error(`--seed must be a non-negative integer, got ${values.seed}`);
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 100)
    throw new Error(`--rounds must be an integer from 1 to 100, got ${values.rounds}`);
  if (values.compare !== undefined && values.compare.trim().length === 0)
    throw new Error("--compare needs a git ref (a branch, tag or commit)");
  const scenarios = (values.scenario ?? [])
    .flatMap((s) => s.split(","))
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return {
    quick: values.quick,
    scenarios,
    scale,
    out: values.out,
    dataDir: values.data,
    seed,
    help: values.help,
    compare: values.compare,
    rounds,
    json: values.json,
  };
}
