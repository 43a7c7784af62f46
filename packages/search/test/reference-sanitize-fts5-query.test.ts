import { containsCjk, referenceSanitizeFts5Query } from "@hermes/search";
import { describe, expect, it } from "vitest";
import { countCjk } from "../dist/cjk.js";
import { pyStrip, referenceDropsLeadingNot } from "../dist/reference-sanitize-fts5-query.js";

// Every example of SPEC.md §6: what the reference's `_sanitize_fts5_query` returns.
const SPEC_EXAMPLES: ReadonlyArray<readonly [string, string]> = [
  ["hello world", "hello world"],
  ["C++", "C"],
  ['"unterminated', "unterminated"],
  ["(problem", "problem"],
  ["{test}", "test"],
  ["hello AND", "hello"],
  ["OR world", "world"],
  ["hello NOT", "hello"],
  ["***", ""],
  ["deploy*", "deploy*"],
  ["docker*  *k8s", "docker*  k8s"],
  ["a AND OR b", "a AND OR b"],
  ["AND OR", "OR"],
  ["NOT", ""],
  ["chat-send", '"chat-send"'],
  ['"chat-send"', '"chat-send"'],
  ["fix chat-send bug", 'fix "chat-send" bug'],
  ["P2.2", '"P2.2"'],
  ["my-app.config.ts", '"my-app.config.ts"'],
  ["a.b-c OR x", '"a.b-c" OR x'],
  ['"exact phrase" setup', '"exact phrase" setup'],
  ['"a" "b', '"a"  b'],
  ["foo^bar", "foo bar"],
  ["snake_case_name", "snake_case_name"],
  ['chat-send OR "unterminated', '"chat-send" OR  unterminated'],
  ["100%完成", "100%完成"],
];

describe("referenceSanitizeFts5Query (the reference's sanitizer, bit for bit)", () => {
  it.each(SPEC_EXAMPLES)("%j → %j", (input, expected) => {
    expect(referenceSanitizeFts5Query(input)).toBe(expected);
  });

  // Rules of §6 beyond the table, each checked on its own.
  it.each([
    ["only one leading operator goes", "AND AND x", "AND x"],
    ["only one trailing operator goes", "x OR OR", "x OR"],
    ["leading operators are case-insensitive", "or world", "world"],
    ["a trailing operator needs whitespace before it", "xAND", "xAND"],
    ["a star right after whitespace is dropped", "a *b", "a b"],
    ["internal double spaces stay", "a  b", "a  b"],
    ["quoted phrases are kept whole, specials inside untouched", '"a (b) ^c"', '"a (b) ^c"'],
    ["an empty quoted phrase is kept", 'x ""', 'x ""'],
    ["Python whitespace (U+001F) is trimmed", "\u001fhello\u001f", "hello"],
    ["U+FEFF is not Python whitespace", "\ufeffhello", "\ufeffhello"],
    ["dotted terms quote across Unicode word characters", "café.menu", '"café.menu"'],
  ])("%s: %j → %j", (_rule, input, expected) => {
    expect(referenceSanitizeFts5Query(input)).toBe(expected);
  });

  it.each([
    ["NOT docker", true],
    ["  NOT docker", true],
    ['NOT "docker deploy"', true],
    ["(NOT docker)", true],
    ["NOT", true],
    ["not docker", false],
    ["NOTE docker", false],
    ["NOT_docker", false],
    ["docker NOT x", false],
    ["AND NOT x", false],
  ])("referenceDropsLeadingNot(%j) is %s: the reference removed an upper-case NOT", (input, dropped) => {
    expect(referenceDropsLeadingNot(input)).toBe(dropped);
  });

  it("pyStrip trims Python's whitespace set only", () => {
    expect(pyStrip("\u0085 x \u3000")).toBe("x");
    expect(pyStrip("\u200bx")).toBe("\u200bx");
  });
});

describe("containsCjk / countCjk (the reference's ranges)", () => {
  it.each([
    ["\u4e00", true, "CJK Unified Ideographs, first"],
    ["\u9fff", true, "CJK Unified Ideographs, last"],
    ["\u3400", true, "Extension A"],
    ["\u4dbf", true, "Extension A, last"],
    ["\u{20000}", true, "Extension B"],
    ["\u{2a6df}", true, "Extension B, last"],
    ["\u{2a6e0}", false, "after Extension B"],
    ["\u3000", true, "CJK symbols and punctuation (ideographic space)"],
    ["。", true, "ideographic full stop"],
    ["\u3040", true, "Hiragana block start"],
    ["カ", true, "Katakana"],
    ["\uac00", true, "Hangul syllables"],
    ["\ud7af", true, "Hangul syllables block end"],
    ["\ud7b0", false, "Hangul Jamo Extended-B"],
    ["\u3130", false, "Hangul compatibility Jamo (not in the reference's ranges)"],
    ["\uff01", false, "fullwidth forms (not in the ranges)"],
    ["hello", false, "ASCII"],
    ["100%完成", true, "mixed"],
  ])("%j → %s (%s)", (text, expected) => {
    expect(containsCjk(text)).toBe(expected);
  });

  it("counts code points, not UTF-16 units", () => {
    expect(countCjk("Agent通信")).toBe(2);
    expect(countCjk("\u{20000}\u{20001}a")).toBe(2);
    expect(countCjk("广西 OR 桂林")).toBe(4);
  });
});
