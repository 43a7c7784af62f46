import type { TerminalStyle } from "./terminal-style.js";
import { displayWidth, pad, truncate } from "./text-width.js";

/** One column of {@link renderTable}. */
export interface TableColumn {
  header: string;
  align?: "left" | "right";
  /** Cells wider than this are cut with `…`. */
  maxWidth?: number;
}

/**
 * A plain text table with a bold header row, columns two spaces apart. With `lineWidth` (a
 * terminal's width), the last column is narrowed so lines do not wrap.
 */
export function renderTable(
  columns: TableColumn[],
  rows: string[][],
  style: TerminalStyle,
  lineWidth?: number,
): string {
  let cells = rows.map((row) =>
    columns.map((col, i) => {
      const cell = row[i] ?? "";
      return col.maxWidth === undefined ? cell : truncate(cell, col.maxWidth);
    }),
  );
  const measure = () =>
    columns.map((col, i) =>
      Math.max(displayWidth(col.header), ...cells.map((row) => displayWidth(row[i] ?? ""))),
    );
  let widths = measure();
  const total = widths.reduce((a, b) => a + b, 0) + 2 * (columns.length - 1);
  if (lineWidth !== undefined && lineWidth > 0 && total > lineWidth && columns.length > 1) {
    const last = columns.length - 1;
    const room = Math.max(10, widths[last]! - (total - lineWidth));
    cells = cells.map((row) => row.map((cell, i) => (i === last ? truncate(cell, room) : cell)));
    widths = measure();
  }
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
