import { styleText } from "node:util";

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
  /** A search match: bold reverse-video yellow on a terminal, `>>>match<<<` elsewhere. */
  match(text: string): string;
}

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

type Format = Parameters<typeof styleText>[0];

// Colour is decided above, per stream: Node's own check (stdout's, in some 20.x releases only
// for single formats) must not second-guess it.
const paint = (format: Format, text: string) => styleText(format, text, { validateStream: false });

/** A style for one output stream (Node's `util.styleText`, once colour is decided). */
export function createStyle(color: boolean): TerminalStyle {
  const as = (format: Format) => (text: string) => (color ? paint(format, text) : text);
  return {
    color,
    bold: as("bold"),
    dim: as("dim"),
    italic: as("italic"),
    red: as("red"),
    green: as("green"),
    yellow: as("yellow"),
    blue: as("blue"),
    magenta: as("magenta"),
    cyan: as("cyan"),
    match: (text) => (color ? paint(["bold", "inverse", "yellow"], text) : `>>>${text}<<<`),
  };
}
