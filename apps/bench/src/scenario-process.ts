/**
 * Runs one scenario in its own process, so each scenario's peak RSS is its own and a crash in
 * one does not end the run. The parent (`main.ts`) sends the context and receives the outcome.
 */
import { mkdirSync, rmSync } from "node:fs";
import { peakRssMb } from "./peak-rss.js";
import type { ScenarioContext, ScenarioOutcome } from "./scenario.js";
import { SCENARIOS } from "./scenarios/index.js";

/** The message the parent sends to start a scenario. */
export interface ScenarioRequest {
  name: string;
  scale: number;
  quick: boolean;
  seed: number;
  dataDir: string;
  workDir: string;
}

/** What the scenario process answers. */
export type ScenarioReply =
  | { type: "result"; outcome: ScenarioOutcome; durationMs: number; peakRssMb: number }
  | { type: "error"; message: string; stack?: string; durationMs: number; peakRssMb: number };

process.once("message", async (request: ScenarioRequest) => {
  const started = performance.now();
  let reply: ScenarioReply;
  try {
    const scenario = SCENARIOS.find((s) => s.name === request.name);
    if (scenario === undefined) throw new Error(`unknown scenario ${request.name}`);
    mkdirSync(request.workDir, { recursive: true });
    const ctx: ScenarioContext = {
      scale: request.scale,
      quick: request.quick,
      seed: request.seed,
      dataDir: request.dataDir,
      workDir: request.workDir,
      log: (message) => process.stderr.write(`  [${request.name}] ${message}\n`),
    };
    const outcome = await scenario.run(ctx);
    reply = { type: "result", outcome, durationMs: performance.now() - started, peakRssMb: peakRssMb() };
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    reply = {
      type: "error",
      message: e.message,
      stack: e.stack,
      durationMs: performance.now() - started,
      peakRssMb: peakRssMb(),
    };
  } finally {
    rmSync(request.workDir, { recursive: true, force: true });
  }
  process.send?.(reply, () => process.exit(0));
});
