import { HermesStoreError } from "./hermes-store-error.js";

/** One rejected line of an import (for an iterable source, `line` is the 1-based item number). */
export interface InvalidImportLine {
  line: number;
  message: string;
}

/**
 * An import source holds lines that cannot be imported (bad JSON, a missing or mistyped column,
 * an unknown parent, another format). `lines` lists them (at most 100, in line order); nothing
 * from a rejected line is written.
 */
export class ImportInvalidError extends HermesStoreError {
  readonly lines: readonly InvalidImportLine[];
  /** The first rejected line. */
  readonly line: number;

  constructor(lines: readonly InvalidImportLine[], total = lines.length, what = "line") {
    const first = lines[0] ?? { line: 0, message: "invalid" };
    const more = total > 1 ? ` (and ${total - 1} more invalid ${what}s)` : "";
    super(
      "IMPORT_INVALID",
      `Import rejected: ${what} ${first.line}: ${first.message}${more}; nothing was imported from it`,
    );
    this.name = "ImportInvalidError";
    this.lines = lines;
    this.line = first.line;
  }
}
