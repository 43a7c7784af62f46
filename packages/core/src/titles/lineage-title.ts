import { InvalidArgumentError } from "../errors/hermes-store-error.js";
import { optionalString } from "../validation/arguments.js";

/** A title argument of a lookup: any string (lookups are exact and never sanitized). */
export function titleArgument(name: string, value: unknown): string {
  const text = typeof value === "string" ? optionalString(name, value) : null;
  if (text === null) throw new InvalidArgumentError(name, `${name} must be a string`);
  return text;
}

// Python regexes of the reference, spelled for JavaScript: `.` there excludes only "\n",
// `$` also matches before one final "\n", and `\d` is any Unicode decimal digit (Nd).
/** A title ending in ` #<digits>`: group 1 is the base title. */
export const NUMBERED_SUFFIX = /^([^\n]*?) #(\p{Nd}+)\n?$/u;
/** The trailing ` #<digits>` number of a lineage title. */
export const LAST_NUMBER = /^[^\n]* #(\p{Nd}+)\n?$/u;
const DECIMAL_DIGIT = /\p{Nd}/u;

/**
 * Value of a run of Unicode decimal digits, as Python's `int()` reads it. Unicode encodes
 * every decimal digit set as ten contiguous code points, 0 to 9, so a digit's value is its
 * offset from the start of its run of digits, modulo 10. BigInt: the reference's integers
 * have no size limit.
 *
 * @example decimalValue("٤٢") // 42n (Arabic-Indic digits)
 */
export function decimalValue(digits: string): bigint {
  if (/^[0-9]+$/.test(digits)) return BigInt(digits);
  let value = 0n;
  for (const ch of digits) {
    const cp = ch.codePointAt(0) ?? 0;
    let start = cp;
    while (start > 0 && DECIMAL_DIGIT.test(String.fromCodePoint(start - 1))) start--;
    value = value * 10n + BigInt((cp - start) % 10);
  }
  return value;
}

/** The base of a lineage title: `X #3` → `X`, `X` → `X`. */
export function lineageBase(title: string): string {
  return NUMBERED_SUFFIX.exec(title)?.[1] ?? title;
}

/**
 * The next title of the lineage `base`, given the stored titles equal to `base` or like
 * `base #…` (a backend finds those; the numbering is the same everywhere): `base` when there is
 * none, else `base #n` above the largest number in use (at least `#2`; the unnumbered original
 * counts as 1, and gaps are not filled: "#2", "#7" → "#8").
 *
 * @example nextLineageTitle("Deploy", [{ title: "Deploy" }, { title: "Deploy #2" }]) // "Deploy #3"
 */
export function nextLineageTitle(base: string, existing: ReadonlyArray<{ title: string | null }>): string {
  if (existing.length === 0) return base;
  let max = 1n;
  for (const row of existing) {
    const digits = typeof row.title === "string" ? LAST_NUMBER.exec(row.title)?.[1] : undefined;
    if (digits === undefined) continue;
    const n = decimalValue(digits);
    if (n > max) max = n;
  }
  return `${base} #${max + 1n}`;
}
