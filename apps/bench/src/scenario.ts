import type { TopLevelSpec } from "vega-lite";
import type { Figures } from "./latency-summary.js";

/** Options every scenario receives. */
export interface ScenarioContext {
  /** Fraction of the full sizes (1 = the sizes of the issues; `--quick` uses 0.01). */
  readonly scale: number;
  readonly quick: boolean;
  readonly seed: number;
  /** Cache of generated data sets. */
  readonly dataDir: string;
  /** A scratch directory of this scenario, removed afterwards. */
  readonly workDir: string;
  /** Prints a progress note on stderr. */
  log(message: string): void;
}

/** How our side of a case went. */
export type CaseStatus = "ok" | "unavailable" | "error";

/** One line of a scenario's table: our figures next to the raw baseline's. */
export interface CaseResult {
  /** What was measured, e.g. `appendMessage` or `writers=8`. */
  name: string;
  status: CaseStatus;
  /** Why figures are missing (`not available yet: …`, an error message). */
  note?: string;
  store: Figures | null;
  baseline: Figures | null;
  /** Our mean time per operation over the baseline's (see `timeRatio`). */
  ratio: number | null;
  /** Figures particular to the scenario (retries, WAL bytes, peak RSS, rows checked …). */
  extra?: Record<string, number | string | boolean | null>;
}

/** What a scenario returns; written to `<out>/<scenario>.json`. */
export interface ScenarioOutcome {
  cases: CaseResult[];
  /** Sentences worth reading next to the table (data set, caveats). */
  notes: string[];
  /** A vega-lite chart of the cases, rendered to `<out>/<scenario>.svg`. */
  chart?: TopLevelSpec;
  /** Parameters the scenario ran with (sizes, repetitions). */
  parameters: Record<string, unknown>;
}

/** A benchmark scenario. */
export interface Scenario {
  readonly name: string;
  readonly title: string;
  /** One sentence: what is measured and against which baseline. */
  readonly description: string;
  run(ctx: ScenarioContext): Promise<ScenarioOutcome>;
}
