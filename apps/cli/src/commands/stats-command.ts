import { Command, Option } from "commander";
import { globalOptions } from "../global-options.js";
import { openExisting, withStore } from "../open-database.js";
import { parseSince } from "../parse-options.js";
import { formatCost, formatCount } from "../render/format-time.js";
import { renderTable } from "../render/table.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
import { extension } from "../store-extensions.js";
import { printJson } from "../write-output.js";

interface StatsOptions {
  by?: "source" | "model" | "day";
  since?: number;
  until?: number;
  json?: boolean;
}

/** The groups of a usage report, whatever container the store wraps them in. */
function rowsOf(report: unknown): Array<Record<string, unknown>> {
  if (Array.isArray(report)) return report as Array<Record<string, unknown>>;
  if (typeof report === "object" && report !== null) {
    const r = report as Record<string, unknown>;
    for (const key of ["groups", "rows"])
      if (Array.isArray(r[key])) return r[key] as Array<Record<string, unknown>>;
    return [r];
  }
  return [];
}

function cell(key: string, value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return /cost|usd/i.test(key) ? formatCost(value) : formatCount(value);
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** `stats`: sessions, messages, tokens and cost, in total or per source, model or day. */
export function statsCommand(): Command {
  return new Command("stats")
    .description("usage: sessions, messages, tokens and cost (total, or --by source|model|day)")
    .addOption(new Option("--by <group>", "group by").choices(["source", "model", "day"]))
    .option(
      "--since <date>",
      "only sessions started since a date (2026-01-31) or age (7d)",
      parseSince("--since"),
    )
    .option("--until <date>", "only sessions started before a date", parseSince("--until"))
    .option("--json", "print the report as JSON")
    .action(async (o: StatsOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      await withStore(await openExisting(g), async (store) => {
        const report = await extension(
          store,
          "usageStats",
        )({
          ...(o.by !== undefined ? { groupBy: o.by } : {}),
          ...(o.since !== undefined ? { since: o.since } : {}),
          ...(o.until !== undefined ? { until: o.until } : {}),
        });
        if (o.json) return printJson(report);
        const rows = rowsOf(report);
        if (rows.length === 0) {
          process.stdout.write("No sessions.\n");
          return;
        }
        const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
        const style = createStyle(wantsColor(process.stdout, g.color));
        const table = renderTable(
          keys.map((k) => ({
            header: k.replace(/([A-Z])/g, "_$1").toUpperCase(),
            align: typeof rows[0]?.[k] === "number" ? ("right" as const) : ("left" as const),
            maxWidth: 40,
          })),
          rows.map((r) => keys.map((k) => cell(k, r[k]))),
          style,
        );
        process.stdout.write(`${table}\n`);
      });
    });
}
