import type { ScenarioContext } from "../scenario.js";
import type { DatasetSpec } from "./ensure-dataset.js";

const scaled = (ctx: ScenarioContext, full: number, min: number) =>
  Math.max(min, Math.round(full * ctx.scale));

/** 100,000 sessions and 1,000,000 messages at full scale: listing, search, export, migrate. */
export function mainDataset(ctx: ScenarioContext, schema: "v11" | "v10" = "v11"): DatasetSpec {
  return {
    name: "main",
    sessions: scaled(ctx, 100_000, 100),
    messages: scaled(ctx, 1_000_000, 1000),
    bigSessionMessages: 0,
    seed: ctx.seed,
    schema,
  };
}

/** One session of 20,000 messages (full scale) among 200 ordinary ones: resume. */
export function resumeDataset(ctx: ScenarioContext): DatasetSpec {
  return {
    name: "resume",
    sessions: 200,
    messages: 2000,
    bigSessionMessages: scaled(ctx, 20_000, 500),
    seed: ctx.seed,
    schema: "v11",
  };
}

/** One session of 100,000 messages (full scale): fork. */
export function forkDataset(ctx: ScenarioContext): DatasetSpec {
  return {
    name: "fork",
    sessions: 20,
    messages: 200,
    bigSessionMessages: scaled(ctx, 100_000, 1000),
    seed: ctx.seed,
    schema: "v11",
  };
}
