import stringWidth from "string-width";

// Width comes from string-width (East Asian Width, emoji presentation, zero-width marks);
// cutting goes grapheme by grapheme, so a ZWJ emoji or a skin tone is never split.
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Columns a string occupies in a terminal (ANSI escapes excluded). */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/**
 * Cuts a plain string to at most `max` columns, ending with `…` when cut. A wide character
 * that would overflow the last column is left out (the result may be one column short).
 */
export function truncate(text: string, max: number): string {
  if (stringWidth(text) <= max) return text;
  if (max <= 0) return "";
  let out = "";
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    const w = stringWidth(segment);
    if (width + w > max - 1) break;
    out += segment;
    width += w;
  }
  return `${out}…`;
}

/** Pads to `width` columns (left-aligned, or right-aligned for numbers). */
export function pad(text: string, width: number, align: "left" | "right" = "left"): string {
  const fill = " ".repeat(Math.max(0, width - stringWidth(text)));
  return align === "left" ? text + fill : fill + text;
}

/** One line: control characters and line breaks become spaces, runs collapse. */
export function oneLine(text: string): string {
  return text.replace(/[\s\u0000-\u001f\u007f]+/g, " ").trim();
}
