import { markdownTable } from "markdown-table";
import { formatMs } from "../report/markdown-table.js";
import { type FigureComparison, median } from "./compare-figures.js";

/** What a comparison produced: written as `compare.json`, printed as {@link compareMarkdown}. */
export interface CompareResult {
  /** The build measured as "old": the ref, and the commit it named. */
  old: { ref: string; commit: string };
  /** The build measured as "new": the checkout running the comparison. */
  new: { commit: string | null; dirty: boolean };
  scenarios: string[];
  rounds: number;
  quick: boolean;
  scale: number;
  seed: number;
  /** 1-minute load average before each run, in the order the runs happened. */
  loadAverages: Array<{ round: number; side: "old" | "new"; scenario: string; load: number }>;
  /** Scenario runs whose report said a case failed (side, round, scenario, status). */
  failures: string[];
  figures: FigureComparison[];
}

/** The figures the printed table shows (the JSON file has them all, the `extra` ones too). */
const PRINTED = new Set(["store.opsPerSec", "store.p50Ms", "store.p99Ms", "store.maxMs", "ratio"]);

function formatFigure(figure: string, value: number): string {
  if (figure === "ratio") return `${value.toFixed(2)}×`;
  if (figure.endsWith("Ms")) return formatMs(value);
  return value >= 100 ? Math.round(value).toLocaleString("en-US") : value.toPrecision(3);
}

/** `median (min–max)` of one side's figure over the rounds. */
function sideCell(figure: string, values: Array<number | null>): string {
  const measured = values.filter((v): v is number => v !== null);
  if (measured.length === 0) return "–";
  const mid = formatFigure(figure, median(measured));
  if (measured.length === 1) return mid;
  const low = formatFigure(figure, Math.min(...measured));
  const high = formatFigure(figure, Math.max(...measured));
  return `${mid} (${low}–${high})`;
}

/** The comparison as Markdown: one row per case and figure, the ratio new ÷ old first. */
export function compareMarkdown(result: CompareResult): string {
  const loads = result.loadAverages.map((l) => l.load);
  const header = [
    `# ${result.new.commit ?? "working tree"}${result.new.dirty ? " (with uncommitted changes)" : ""} against ${result.old.ref} (${result.old.commit.slice(0, 10)})`,
    "",
    `${result.rounds} round(s) of ${result.scenarios.join(", ")}${result.quick ? " (quick)" : ""} at scale ${result.scale}, seed ${result.seed}; the builds took turns (old first in even rounds, new first in odd ones).`,
    `Load average (1 min) before the runs: ${loads.length === 0 ? "–" : `${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}`}.`,
    "new ÷ old is the median of the rounds' ratios, with their spread; for ops/s above 1 is faster, for times and the bench's own ratio (ours ÷ raw SQL) below 1 is better.",
    ...result.failures.map((f) => `- failed: ${f}`),
    "",
  ];
  const rows = result.figures
    .filter((f) => PRINTED.has(f.figure))
    .map((f) => [
      f.scenario,
      f.case,
      f.figure.replace(/^store\./, ""),
      f.ratio === null ? "–" : f.ratio.toFixed(2),
      f.ratioMin === null ? "–" : `${f.ratioMin.toFixed(2)}–${f.ratioMax!.toFixed(2)}`,
      sideCell(f.figure, f.new),
      sideCell(f.figure, f.old),
    ]);
  const table = markdownTable(
    [["scenario", "case", "figure", "new ÷ old", "spread", "new", "old"], ...rows],
    { align: ["l", "l", "l", "r", "r", "r", "r"], alignDelimiters: false },
  );
  return `${header.join("\n")}\n${table}\n`;
}
