import type { TerminalStyle } from "./terminal-style.js";
import { displayWidth, pad, truncate } from "./text-width.js";

/** One column of {@link renderTable}. */
export interface TableColumn {
  header: string;
  align?: "left" | "right";
  /** Cells wider than this are cut with `…`. */
  maxWidth?: number;
}

/** A plain text table with a bold header row, columns two spaces apart. */
export function renderTable(columns: TableColumn[], rows: string[][], style: TerminalStyle): string {
  const cells = rows.map((row) =>
    columns.map((col, i) => {
      const cell = row[i] ?? "";
      return col.maxWidth === undefined ? cell : truncate(cell, col.maxWidth);
    }),
  );
  const widths = columns.map((col, i) =>
    Math.max(displayWidth(col.header), ...cells.map((row) => displayWidth(row[i] ?? ""))),
  );
  const line = (row: string[], header: boolean) =>
    row
      .map((cell, i) => {
        const text = pad(cell, widths[i]!, columns[i]!.align);
        return header ? style.bold(text) : text;
      })
      .join("  ")
      .trimEnd();
  return [
    line(
      columns.map((c) => c.header),
      true,
    ),
    ...cells.map((row) => line(row, false)),
  ].join("\n");
}
