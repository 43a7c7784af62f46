// Python's whitespace (`str.isspace`, and `\s` in `re` str patterns). JavaScript's `\s` and
// `trim()` differ: they lack U+001C–U+001F and U+0085, and include U+FEFF. Replays and previews
// must strip exactly what the reference strips, or the replayed-prompt dedupe and exports diverge.

/** Whether a UTF-16 code unit is whitespace to Python, `str.isspace()` (all of it is in the BMP). */
export function isPythonWhitespace(code: number): boolean {
  if (code <= 0x20) return (code >= 0x09 && code <= 0x0d) || code >= 0x1c;
  return (
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

/**
 * Python's `str.strip()` with no arguments: removes leading and trailing Unicode whitespace as
 * Python defines it (which is not quite `String.prototype.trim`).
 *
 * @example stripPythonWhitespace("\u001c hi \ufeff") // "hi \ufeff"
 */
export function stripPythonWhitespace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isPythonWhitespace(text.charCodeAt(start))) start++;
  while (end > start && isPythonWhitespace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}
