import type { CaseResult } from "../scenario.js";

/** The part of a scenario's JSON report (`<out>/<scenario>.json`) a comparison reads. */
export interface ComparedReport {
  scenario: string;
  status: string;
  cases: CaseResult[];
  machine?: { loadAverage?: number; gitCommit?: string | null };
}

/** One figure of one case, measured on both builds in every round. */
export interface FigureComparison {
  scenario: string;
  case: string;
  /** `store.opsPerSec`, `store.p99Ms`, …, `ratio` (ours ÷ raw SQL) or `extra.<name>`. */
  figure: string;
  /** Whether a larger value is better (throughput) or worse (times, ratios). */
  higherIsBetter: boolean;
  /** The figure per round, `null` where that round did not measure it. */
  old: Array<number | null>;
  new: Array<number | null>;
  /** new ÷ old per round where both sides measured a non-zero value. */
  ratios: number[];
  /** Median of `ratios` and their spread; `null` when no round gave a ratio. */
  ratio: number | null;
  ratioMin: number | null;
  ratioMax: number | null;
}

/** The store figures compared for every case, in the order they are printed. */
const STORE_FIGURES = ["opsPerSec", "p50Ms", "p99Ms", "maxMs", "meanMs"] as const;

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function finite(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** Every numeric figure of a case, keyed as in {@link FigureComparison.figure}. */
function figuresOfCase(c: CaseResult): Map<string, number | null> {
  const figures = new Map<string, number | null>();
  for (const name of STORE_FIGURES) figures.set(`store.${name}`, finite(c.store?.[name]));
  figures.set("ratio", finite(c.ratio));
  for (const [name, value] of Object.entries(c.extra ?? {})) {
    if (typeof value === "number") figures.set(`extra.${name}`, finite(value));
  }
  return figures;
}

/**
 * Pairs the rounds of both builds figure by figure: `old[r]` and `new[r]` were measured in
 * round `r` of one sitting, so each round's ratio new ÷ old compares runs that met the same load.
 * Cases and figures are those of the new build, then any only the old one has.
 */
export function compareRounds(oldRounds: ComparedReport[], newRounds: ComparedReport[]): FigureComparison[] {
  const keyOf = (scenario: string, name: string) => `${scenario}\u0000${name}`;
  const perRound = (reports: ComparedReport[]) =>
    reports.map((report) => {
      const cases = new Map<string, Map<string, number | null>>();
      for (const c of report.cases) cases.set(keyOf(report.scenario, c.name), figuresOfCase(c));
      return cases;
    });
  const olds = perRound(oldRounds);
  const news = perRound(newRounds);
  const order: Array<[string, string, string]> = [];
  const seen = new Set<string>();
  for (const rounds of [newRounds, oldRounds]) {
    for (const report of rounds) {
      for (const c of report.cases) {
        for (const figure of figuresOfCase(c).keys()) {
          const id = `${keyOf(report.scenario, c.name)}\u0000${figure}`;
          if (seen.has(id)) continue;
          seen.add(id);
          order.push([report.scenario, c.name, figure]);
        }
      }
    }
  }
  const rounds = Math.max(olds.length, news.length);
  return order.map(([scenario, name, figure]) => {
    const key = keyOf(scenario, name);
    const pick = (sides: typeof olds, r: number) => sides[r]?.get(key)?.get(figure) ?? null;
    const old = Array.from({ length: rounds }, (_, r) => pick(olds, r));
    const now = Array.from({ length: rounds }, (_, r) => pick(news, r));
    const ratios: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const a = old[r];
      const b = now[r];
      if (a !== null && a !== undefined && b !== null && b !== undefined && a !== 0) ratios.push(b / a);
    }
    return {
      scenario,
      case: name,
      figure,
      higherIsBetter: figure === "store.opsPerSec",
      old,
      new: now,
      ratios,
      ratio: ratios.length > 0 ? median(ratios) : null,
      ratioMin: ratios.length > 0 ? Math.min(...ratios) : null,
      ratioMax: ratios.length > 0 ? Math.max(...ratios) : null,
    };
  });
}
