import { markdownTable as renderMarkdownTable } from "markdown-table";
import type { MachineInfo } from "../machine-info.js";
import type { CaseResult } from "../scenario.js";

/** A duration for humans: µs below 1 ms, one decimal below 100 ms. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  if (ms < 1) return `${Math.round(ms * 1000)} µs`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms).toLocaleString("en-US")} ms`;
}

function formatRate(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "–";
  if (value >= 100) return Math.round(value).toLocaleString("en-US");
  return value >= 1 ? value.toFixed(1) : value.toPrecision(2);
}

function formatExtra(extra: CaseResult["extra"]): string {
  if (extra === undefined) return "";
  return Object.entries(extra)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(
      ([k, v]) =>
        `${k}=${typeof v === "number" ? (Number.isInteger(v) ? v.toLocaleString("en-US") : v.toFixed(2)) : String(v)}`,
    )
    .join(", ");
}

/** The result row of one case. */
export interface TableRow {
  scenario: string;
  result: CaseResult;
}

/**
 * The Markdown table of a run: ours and the baseline side by side, and the time ratio
 * (ours / raw; below 1 means faster than the baseline).
 */
export function markdownTable(rows: readonly TableRow[]): string {
  const header = [
    "scenario",
    "case",
    "ours p50",
    "ours p99",
    "ours max",
    "ours ops/s",
    "raw p50",
    "raw p99",
    "raw ops/s",
    "ratio",
    "notes",
  ];
  const body = rows.map(({ scenario, result: c }) => {
    const notes = [c.note, formatExtra(c.extra)].filter((s) => s !== undefined && s.length > 0).join("; ");
    return [
      scenario,
      c.name,
      formatMs(c.store?.p50Ms),
      formatMs(c.store?.p99Ms),
      formatMs(c.store?.maxMs),
      formatRate(c.store?.opsPerSec),
      formatMs(c.baseline?.p50Ms),
      formatMs(c.baseline?.p99Ms),
      formatRate(c.baseline?.opsPerSec),
      c.ratio === null ? "–" : `${c.ratio.toFixed(2)}×`,
      notes.replaceAll("|", "\\|"),
    ];
  });
  return renderMarkdownTable([header, ...body], {
    align: ["l", "l", "r", "r", "r", "r", "r", "r", "r", "r", "l"],
    alignDelimiters: false,
  });
}

/** One line describing the machine, for the table's caption. */
export function machineLine(m: MachineInfo): string {
  return `${m.cpuModel}, ${m.cores} cores, ${m.memoryGb} GB, ${m.platform}; Node ${m.node}, SQLite ${m.sqlite} (better-sqlite3 ${m.betterSqlite3}); load average at start ${m.loadAverage}; commit ${m.gitCommit ?? "?"}; ${m.date}`;
}
