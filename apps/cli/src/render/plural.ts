import { formatCount } from "./format-time.js";

/** English plural categories (`one`, `other`), by the runtime's CLDR rules. */
const rules = new Intl.PluralRules("en");

/** Words whose plural is not the word plus "s". */
const IRREGULAR: Readonly<Record<string, string>> = { day: "days", match: "matches", entry: "entries" };

/** `word` in the form that goes with `n` ("1 session", "2 sessions"); `plural` overrides the plural. */
export function wordFor(n: number, word: string, plural?: string): string {
  if (rules.select(n) === "one") return word;
  return plural ?? IRREGULAR[word] ?? `${word}s`;
}

/** `n` (with thousands separators) and the word that goes with it: "1 message", "1,204 messages". */
export function countOf(n: number, word: string, plural?: string): string {
  return `${formatCount(n)} ${wordFor(n, word, plural)}`;
}
