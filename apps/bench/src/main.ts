#!/usr/bin/env node
/**
 * `pnpm bench`: runs the benchmark scenarios, each next to a hand-written better-sqlite3
 * baseline in the same run, and writes a Markdown table (stdout and `<out>/summary.md`), one
 * JSON file and one SVG chart per scenario.
 */
import { fork } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type BenchOptions, parseCliOptions, USAGE } from "./cli-options.js";
import { compareMain } from "./compare/compare-main.js";
import { type MachineInfo, machineInfo } from "./machine-info.js";
import { machineLine, markdownTable, type TableRow } from "./report/markdown-table.js";
import { messageChart, renderSvg } from "./report/render-chart.js";
import type { CaseResult, ScenarioOutcome } from "./scenario.js";
import type { ScenarioReply, ScenarioRequest } from "./scenario-process.js";
import { SCENARIOS } from "./scenarios/index.js";

/** The JSON written per scenario. */
export interface ScenarioReport {
  scenario: string;
  title: string;
  description: string;
  status: "ok" | "partial" | "unavailable" | "error";
  error?: string;
  machine: MachineInfo;
  scale: number;
  quick: boolean;
  seed: number;
  durationMs: number;
  /** Peak resident set of the scenario's process (ours and the baseline share it unless noted). */
  peakRssMb: number;
  parameters: Record<string, unknown>;
  notes: string[];
  cases: CaseResult[];
}

function runScenarioProcess(request: ScenarioRequest): Promise<ScenarioReply> {
  return new Promise((resolvePromise) => {
    const child = fork(new URL("./scenario-process.js", import.meta.url), [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      execArgv: ["--max-old-space-size=4096"],
    });
    let reply: ScenarioReply | undefined;
    const started = performance.now();
    child.on("message", (m: ScenarioReply) => {
      reply = m;
    });
    // "close", not "exit": "exit" may come before the child's last IPC message has been
    // delivered (the report is sent just before the child exits), which read as a lost report.
    child.on("close", (code, signal) => {
      resolvePromise(
        reply ?? {
          type: "error",
          message: `scenario process exited with ${signal ?? `code ${code}`} before reporting`,
          durationMs: performance.now() - started,
          peakRssMb: Number.NaN,
        },
      );
    });
    child.send(request);
  });
}

/**
 * `summary.md` from every scenario report in `out`, so scenarios run separately (a long one
 * earlier, the rest later) still end up in one document; each says when it was measured.
 */
function summaryOf(out: string): string {
  const reports: ScenarioReport[] = [];
  for (const scenario of SCENARIOS) {
    const file = join(out, `${scenario.name}.json`);
    if (existsSync(file)) reports.push(JSON.parse(readFileSync(file, "utf8")) as ScenarioReport);
  }
  const rows = reports.flatMap((r) => r.cases.map((result) => ({ scenario: r.scenario, result })));
  const runs = [...new Set(reports.map((r) => machineLine(r.machine)))];
  const sections = reports.map(
    (r) =>
      `### ${r.scenario}: ${r.title}\n\n${r.description}\n\n${r.notes.map((n) => `- ${n}`).join("\n")}${r.notes.length > 0 ? "\n" : ""}` +
      `- Measured ${r.machine.date} at scale ${r.scale}${r.quick ? " (quick)" : ""}, seed ${r.seed}; scenario process peak RSS ${r.peakRssMb} MB; ran in ${(r.durationMs / 1000).toFixed(1)} s.\n\n` +
      `![${r.scenario}](${r.scenario}.svg)\n`,
  );
  return [
    "# Benchmark results",
    "",
    `Machine and run${runs.length > 1 ? "s" : ""}:`,
    "",
    ...runs.map((line) => `- ${line}`),
    "",
    "Ratio = our mean time per operation ÷ the raw better-sqlite3 baseline's, both measured in the same run (below 1: faster than the baseline). See apps/bench/README.md.",
    "",
    markdownTable(rows),
    "",
    ...sections,
  ].join("\n");
}

function statusOf(outcome: ScenarioOutcome): ScenarioReport["status"] {
  const statuses = new Set(outcome.cases.map((c) => c.status));
  if (statuses.has("error")) return "error";
  if (statuses.size === 1 && statuses.has("unavailable")) return "unavailable";
  return statuses.has("unavailable") ? "partial" : "ok";
}

async function main(options: BenchOptions): Promise<number> {
  const wanted = options.scenarios;
  const unknown = wanted.filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length > 0) {
    process.stderr.write(
      `Unknown scenario(s): ${unknown.join(", ")}. Known: ${SCENARIOS.map((s) => s.name).join(", ")}\n`,
    );
    return 2;
  }
  const selected = wanted.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => wanted.includes(s.name));
  const out = resolve(options.out);
  const dataDir = resolve(options.dataDir);
  mkdirSync(out, { recursive: true });
  const machine = machineInfo();
  const runStarted = performance.now();
  process.stderr.write(
    `bench: ${selected.length} scenario(s), scale ${options.scale}${options.quick ? " (quick)" : ""}, seed ${options.seed}\n`,
  );
  process.stderr.write(`machine: ${machineLine(machine)}\n`);

  const rows: TableRow[] = [];
  let failed = 0;
  for (const scenario of selected) {
    process.stderr.write(`\n▶ ${scenario.name}: ${scenario.title}\n`);
    const reply = await runScenarioProcess({
      name: scenario.name,
      scale: options.scale,
      quick: options.quick,
      seed: options.seed,
      dataDir,
      workDir: join(dataDir, "work", `${scenario.name}-${process.pid}`),
    });
    const base = {
      scenario: scenario.name,
      title: scenario.title,
      description: scenario.description,
      machine,
      scale: options.scale,
      quick: options.quick,
      seed: options.seed,
      durationMs: Math.round(reply.durationMs),
      peakRssMb: reply.peakRssMb,
    };
    let report: ScenarioReport;
    let chart = messageChart(scenario.title, "scenario failed: see the JSON file");
    if (reply.type === "result") {
      report = {
        ...base,
        status: statusOf(reply.outcome),
        parameters: reply.outcome.parameters,
        notes: reply.outcome.notes,
        cases: reply.outcome.cases,
      };
      if (reply.outcome.chart !== undefined) chart = reply.outcome.chart;
    } else {
      failed++;
      process.stderr.write(`  ✗ ${scenario.name} failed: ${reply.stack ?? reply.message}\n`);
      report = {
        ...base,
        status: "error",
        error: reply.message,
        parameters: {},
        notes: [],
        cases: [
          {
            name: "(scenario)",
            status: "error",
            note: `failed: ${reply.message}`,
            store: null,
            baseline: null,
            ratio: null,
          },
        ],
      };
    }
    writeFileSync(join(out, `${scenario.name}.json`), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(out, `${scenario.name}.svg`), await renderSvg(chart));
    if (report.status === "error" && reply.type === "result") failed++;
    const scenarioRows = report.cases.map((result) => ({ scenario: scenario.name, result }));
    rows.push(...scenarioRows);
    process.stdout.write(
      `\n### ${scenario.name}: ${scenario.title}\n\n${markdownTable(scenarioRows)}\n\n` +
        `Scenario process: peak RSS ${report.peakRssMb} MB, ${(report.durationMs / 1000).toFixed(1)} s.\n`,
    );
    process.stderr.write(
      `  done in ${(reply.durationMs / 1000).toFixed(1)}s, peak RSS ${reply.peakRssMb} MB\n`,
    );
  }
  const totalSeconds = (performance.now() - runStarted) / 1000;
  writeFileSync(join(out, "summary.md"), summaryOf(out));
  process.stdout.write(
    `\n## All scenarios of this run\n\n${markdownTable(rows)}\n\nResults in ${out} (whole run ${totalSeconds.toFixed(0)} s; summary.md lists every scenario result in that directory)\n`,
  );
  return failed > 0 ? 1 : 0;
}

let options: BenchOptions;
try {
  options = parseCliOptions(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
if (options.help) {
  process.stdout.write(USAGE);
} else if (options.compare !== undefined) {
  process.exitCode = await compareMain(options, options.compare);
} else {
  process.exitCode = await main(options);
}
