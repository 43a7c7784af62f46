/**
 * Code point ranges the reference treats as CJK: CJK Unified Ideographs and Extension A/B,
 * CJK Symbols and Punctuation, Hiragana, Katakana, Hangul Syllables.
 */
export const CJK_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x4e00, 0x9fff],
  [0x3400, 0x4dbf],
  [0x20000, 0x2a6df],
  [0x3000, 0x303f],
  [0x3040, 0x309f],
  [0x30a0, 0x30ff],
  [0xac00, 0xd7af],
];

/** Whether one code point is in a CJK range. */
export function isCjkCodePoint(cp: number): boolean {
  for (const [lo, hi] of CJK_RANGES) if (cp >= lo && cp <= hi) return true;
  return false;
}

const CJK_RE =
  /[\u4e00-\u9fff\u3400-\u4dbf\u{20000}-\u{2a6df}\u3000-\u303f\u3040-\u309f\u30a0-\u30ff\uac00-\ud7af]/u;

/**
 * Whether `text` contains any CJK code point (the reference's `_contains_cjk`).
 *
 * @example containsCjk("100%完成") // true
 */
export function containsCjk(text: string): boolean {
  return CJK_RE.test(text);
}

/** Number of CJK code points in `text`. */
export function countCjk(text: string): number {
  let n = 0;
  for (const ch of text) if (isCjkCodePoint(ch.codePointAt(0) ?? 0)) n++;
  return n;
}
