import type { TerminalStyle } from "./terminal-style.js";
import { displayWidth, pad, truncate } from "./text-width.js";

/** One column of {@link renderTable}. */
export interface TableColumn {
  header: string;
  align?: "left" | "right";
  /** Cells wider than this are cut with `…`, whatever the room. */
  maxWidth?: number;
  /**
   * Narrowest width this column may be cut to when the table must fit a terminal (default: its
   * header's width for text, the full width for right-aligned numbers, which are never cut;
   * `Infinity` keeps any column whole).
   */
  minWidth?: number;
  /** Dropped when even the narrowest widths do not fit; higher goes first (default: never). */
  dropOrder?: number;
}

/** The gap between two columns. */
const GAP = 2;

/**
 * Widths that fit `lineWidth`. The widest column that can give a column gives it, one at a time,
 * but none below half its natural width while a column with a `dropOrder` can go instead (the
 * highest first, then the rest are laid out again); once none can, down to each `minWidth`.
 * Returns the kept columns' indexes and widths.
 */
export function fitColumns(
  natural: readonly number[],
  columns: readonly TableColumn[],
  lineWidth: number | undefined,
): { keep: number[]; widths: number[] } {
  let keep = columns.map((_, i) => i);
  if (lineWidth === undefined) return { keep, widths: [...natural] };
  const hard = (i: number) => {
    const col = columns[i]!;
    return Math.min(
      natural[i]!,
      col.minWidth ?? (col.align === "right" ? natural[i]! : displayWidth(col.header)),
    );
  };
  const soft = (i: number) => Math.max(hard(i), Math.min(natural[i]!, Math.ceil(natural[i]! / 2)));
  const shrink = (floor: (i: number) => number) => {
    const widths = keep.map((i) => natural[i]!);
    const total = () => widths.reduce((a, b) => a + b, 0) + GAP * (widths.length - 1);
    while (total() > lineWidth) {
      let widest = -1;
      for (let k = 0; k < widths.length; k++) {
        if (widths[k]! > floor(keep[k]!) && (widest === -1 || widths[k]! > widths[widest]!)) widest = k;
      }
      if (widest === -1) return { widths, fits: false };
      widths[widest]!--;
    }
    return { widths, fits: true };
  };
  for (;;) {
    const gentle = shrink(soft);
    if (gentle.fits) return { keep, widths: gentle.widths };
    const droppable = keep.filter((i) => columns[i]!.dropOrder !== undefined);
    if (droppable.length === 0) return { keep, widths: shrink(hard).widths };
    const drop = droppable.reduce((a, b) => (columns[b]!.dropOrder! > columns[a]!.dropOrder! ? b : a));
    keep = keep.filter((i) => i !== drop);
  }
}

/**
 * A plain text table: a bold header row, columns two spaces apart, cells cut with `…` (never
 * wrapped). With `lineWidth` (a terminal's width) columns are narrowed, then the least useful
 * dropped, so that no line is wider than the terminal; a line that still is (a very narrow
 * terminal) is cut.
 */
export function renderTable(
  columns: TableColumn[],
  rows: string[][],
  style: TerminalStyle,
  lineWidth?: number,
): string {
  const capped = rows.map((row) =>
    columns.map((col, i) => {
      const cell = row[i] ?? "";
      return col.maxWidth === undefined ? cell : truncate(cell, col.maxWidth);
    }),
  );
  const natural = columns.map((col, i) =>
    Math.max(displayWidth(col.header), ...capped.map((row) => displayWidth(row[i] ?? ""))),
  );
  const { keep, widths } = fitColumns(natural, columns, lineWidth);
  const line = (row: readonly string[], header: boolean) => {
    const text = keep
      .map((i, k) => pad(truncate(row[i] ?? "", widths[k]!), widths[k]!, columns[i]!.align))
      .join(" ".repeat(GAP))
      .trimEnd();
    const fitted = lineWidth !== undefined ? truncate(text, lineWidth) : text;
    return header ? style.bold(fitted) : fitted;
  };
  return [
    line(
      columns.map((c) => c.header),
      true,
    ),
    ...capped.map((row) => line(row, false)),
  ].join("\n");
}

/**
 * The width tables should fit: the terminal's on a TTY, else `$COLUMNS` when set (so a pipe
 * into a pager can ask for it), else none (scripts get whole cells).
 */
export function outputWidth(
  stream: { isTTY?: boolean; columns?: number } = process.stdout,
): number | undefined {
  if (stream.isTTY === true && stream.columns !== undefined && stream.columns > 0) return stream.columns;
  const env = Number(process.env.COLUMNS);
  return Number.isInteger(env) && env > 0 ? env : undefined;
}
