import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import type { CaseResult } from "../scenario.js";

/** Names of the two sides in charts and tables. */
export const STORE_LABEL = "@hermes/store";
/** Name of the hand-written better-sqlite3 side. */
export const BASELINE_LABEL = "raw better-sqlite3";

/**
 * Renders a vega-lite spec to SVG text in Node (vega's headless `View`, no canvas: text widths
 * are estimated, which is fine for labels).
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** A chart that only says why there is nothing to draw. */
export function messageChart(title: string, message: string): TopLevelSpec {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    width: 480,
    height: 60,
    data: { values: [{ message }] },
    mark: { type: "text", fontSize: 14 },
    encoding: { text: { field: "message", type: "nominal" } },
  };
}

/**
 * Latency per case, ours next to the baseline: bars at p50, a black tick at p99. A log scale
 * when the cases span orders of magnitude (a LIKE scan next to an index lookup).
 */
export function latencyChart(
  title: string,
  cases: readonly CaseResult[],
  options: { log?: boolean } = {},
): TopLevelSpec {
  const values: Array<Record<string, unknown>> = [];
  for (const c of cases) {
    if (c.store !== null)
      values.push({ case: c.name, side: STORE_LABEL, p50: c.store.p50Ms, p99: c.store.p99Ms });
    if (c.baseline !== null) {
      values.push({ case: c.name, side: BASELINE_LABEL, p50: c.baseline.p50Ms, p99: c.baseline.p99Ms });
    }
  }
  if (values.length === 0) return messageChart(title, "no figures (not available yet)");
  const y = {
    type: "quantitative" as const,
    title: "latency (ms): bar p50, tick p99",
    scale: options.log ? { type: "log" as const } : { zero: true },
  };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    width: { step: 60 },
    height: 260,
    data: { values },
    encoding: {
      x: { field: "case", type: "nominal", title: null, sort: null, axis: { labelAngle: -30 } },
      xOffset: { field: "side", type: "nominal", sort: [STORE_LABEL, BASELINE_LABEL] },
      color: { field: "side", type: "nominal", title: null, sort: [STORE_LABEL, BASELINE_LABEL] },
    },
    layer: [
      { mark: "bar", encoding: { y: { field: "p50", ...y } } },
      { mark: { type: "tick", color: "black", thickness: 2 }, encoding: { y: { field: "p99", ...y } } },
    ],
  } as TopLevelSpec;
}

/**
 * Two panels against a concurrency axis (writers, callers): throughput and p99 latency, ours and
 * the baseline's.
 */
export function scalingChart(
  title: string,
  axisTitle: string,
  points: ReadonlyArray<{ x: number; side: string; opsPerSec: number | null; p99Ms: number | null }>,
): TopLevelSpec {
  const values = points.filter((p) => p.opsPerSec !== null);
  if (values.length === 0) return messageChart(title, "no figures (not available yet)");
  const x = { field: "x", type: "ordinal" as const, title: axisTitle };
  const color = { field: "side", type: "nominal" as const, title: null };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    data: { values },
    hconcat: [
      {
        width: 300,
        height: 220,
        mark: { type: "line", point: true },
        encoding: { x, color, y: { field: "opsPerSec", type: "quantitative", title: "appends/s" } },
      },
      {
        width: 300,
        height: 220,
        mark: { type: "line", point: true },
        encoding: { x, color, y: { field: "p99Ms", type: "quantitative", title: "p99 per append (ms)" } },
      },
    ],
  } as TopLevelSpec;
}
