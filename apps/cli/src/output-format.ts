import { type Command, Option } from "commander";
import { stringify } from "csv-stringify/sync";
import { usageError } from "./cli-error.js";

/** How a command prints its rows: a table for people, or JSON, CSV or TSV for programs. */
export type OutputFormat = "table" | "json" | "csv" | "tsv";

/** The output flags of a command (`--json`, `--csv`, `--tsv`). */
export interface OutputOptions {
  json?: boolean;
  csv?: boolean;
  tsv?: boolean;
}

/** Adds `--json`, `--csv` and `--tsv` to a command that prints rows. */
export function withOutputOptions(command: Command, what: string): Command {
  return command
    .option("--json", `print the ${what} as JSON`)
    .addOption(new Option("--csv", `print the ${what} as CSV (RFC 4180, a header row)`))
    .addOption(new Option("--tsv", `print the ${what} as tab-separated values (a header row)`));
}

/** The format the flags ask for; more than one is a usage error. */
export function outputFormat(o: OutputOptions): OutputFormat {
  const chosen = (["json", "csv", "tsv"] as const).filter((f) => o[f] === true);
  if (chosen.length > 1) throw usageError(`Choose one of ${chosen.map((f) => `--${f}`).join(", ")}`);
  return chosen[0] ?? "table";
}

/**
 * Rows as CSV or TSV (`csv-stringify`): a header row of `columns`, then one line per row;
 * `null`/absent values are empty, numbers as JSON writes them, objects as JSON text. In TSV,
 * tabs and line breaks inside a value become spaces, so every row stays one line.
 */
export function delimited(
  rows: ReadonlyArray<object>,
  columns: readonly string[],
  format: "csv" | "tsv",
): string {
  const cell = (v: unknown): string => {
    if (v === null || v === undefined) return "";
    const text = typeof v === "object" ? JSON.stringify(v) : String(v);
    return format === "tsv" ? text.replace(/[\t\r\n]+/g, " ") : text;
  };
  const records = rows.map((r) => columns.map((c) => cell((r as Record<string, unknown>)[c])));
  return stringify([columns as string[], ...records], {
    delimiter: format === "csv" ? "," : "\t",
    record_delimiter: "unix",
    ...(format === "tsv" ? { quote: false } : {}),
  });
}
