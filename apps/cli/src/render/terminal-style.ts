/** ANSI styling that turns itself off when the output is not a terminal. */
export interface TerminalStyle {
  /** Whether ANSI escapes are written. */
  readonly color: boolean;
  bold(text: string): string;
  dim(text: string): string;
  italic(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  blue(text: string): string;
  magenta(text: string): string;
  cyan(text: string): string;
  /** A search match: reverse-video yellow on a terminal, `>>>match<<<` elsewhere. */
  match(text: string): string;
}

const wrap = (on: boolean, open: number, close: number) => (text: string) =>
  on ? `\x1b[${open}m${text}\x1b[${close}m` : text;

/**
 * Decides colour the usual way: `NO_COLOR` (any value) or `--no-color` turns it off,
 * `FORCE_COLOR` (not `0`) turns it on, otherwise colour iff the stream is a terminal.
 */
export function wantsColor(stream: { isTTY?: boolean }, flag?: boolean): boolean {
  if (flag === false) return false;
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "") return false;
  const force = process.env.FORCE_COLOR;
  if (force !== undefined && force !== "" && force !== "0") return true;
  return stream.isTTY === true;
}

/** A style for one output stream. */
export function createStyle(color: boolean): TerminalStyle {
  return {
    color,
    bold: wrap(color, 1, 22),
    dim: wrap(color, 2, 22),
    italic: wrap(color, 3, 23),
    red: wrap(color, 31, 39),
    green: wrap(color, 32, 39),
    yellow: wrap(color, 33, 39),
    blue: wrap(color, 34, 39),
    magenta: wrap(color, 35, 39),
    cyan: wrap(color, 36, 39),
    match: (text) => (color ? `\x1b[1;7;33m${text}\x1b[0m` : `>>>${text}<<<`),
  };
}

/** Removes ANSI escapes (for width computations). */
export function stripAnsi(text: string): string {
  return text.replace(/\x1b\[[0-9;]*m/g, "");
}
