import { HermesStoreError, MAX_TITLE_LENGTH, sanitizeTitle, TitleTooLongError } from "@hermes/core";
import { describe, expect, it } from "vitest";

const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

// SPEC.md §5 "Titles": removed before collapsing (so never turned into a space).
const REMOVED_CONTROLS = [...range(0x00, 0x08), 0x0b, 0x0c, ...range(0x0e, 0x1f), 0x7f];
const REMOVED_INVISIBLES = [
  ...range(0x200b, 0x200f),
  ...range(0x2028, 0x202e),
  ...range(0x2060, 0x2069),
  0xfeff,
  ...range(0xfff9, 0xfffb),
  0xfffc,
];
// Python's `\s` (str.isspace) minus what the removal step already took: each run → one space.
const COLLAPSED_SPACES = [
  0x09,
  0x0a,
  0x0d,
  0x20,
  0x85,
  0xa0,
  0x1680,
  ...range(0x2000, 0x200a),
  0x202f,
  0x205f,
  0x3000,
];
// Neighbours of the removed ranges and look-alikes that are neither removed nor whitespace.
const KEPT = [0x180e, 0x00ad, 0x2027, 0x202f + 1, 0x206a, 0xfff8, 0xfffd, 0x034f, 0xe000, 0x1f600];

describe("sanitizeTitle", () => {
  it.each([
    ["null", null],
    ["undefined", undefined],
    ["an empty string", ""],
    ["spaces only", "   "],
    ["tab/LF/CR only", "\t\n\r"],
    ["removed characters and spaces only", " \u0000 \u200b\ufeff "],
    ["ideographic spaces only", "\u3000\u3000"],
  ])("%s → null", (_label, input) => {
    expect(sanitizeTitle(input)).toBeNull();
  });

  it.each(REMOVED_CONTROLS.map((cp) => [hex(cp), cp]))("removes control character %s", (_label, cp) => {
    expect(sanitizeTitle(`a${String.fromCodePoint(cp)}b`)).toBe("ab");
    expect(sanitizeTitle(`${String.fromCodePoint(cp)}title`)).toBe("title");
  });

  it.each(REMOVED_INVISIBLES.map((cp) => [hex(cp), cp]))("removes invisible character %s", (_label, cp) => {
    expect(sanitizeTitle(`a${String.fromCodePoint(cp)}b`)).toBe("ab");
  });

  it.each(COLLAPSED_SPACES.map((cp) => [hex(cp), cp]))("turns whitespace %s into one space", (_label, cp) => {
    const ws = String.fromCodePoint(cp);
    expect(sanitizeTitle(`a${ws}b`)).toBe("a b");
    expect(sanitizeTitle(`a${ws}${ws} ${ws}b`)).toBe("a b");
    expect(sanitizeTitle(`${ws}a${ws}`)).toBe("a");
  });

  it.each(KEPT.map((cp) => [hex(cp), cp]))("keeps %s", (_label, cp) => {
    const ch = String.fromCodePoint(cp);
    expect(sanitizeTitle(`a${ch}b`)).toBe(`a${ch}b`);
  });

  it.each([
    ["trims", "  Fix Docker build  ", "Fix Docker build"],
    ["collapses mixed whitespace runs", "Fix \t\n\r  Docker\u3000\u00a0build", "Fix Docker build"],
    ["removal before collapsing: joins words", "hello\u0000world", "helloworld"],
    ["removal before collapsing: one space", "a \u0000 b", "a b"],
    ["zero-width between spaces", "a \u200b b", "a b"],
    ["line separator is removed, not a space", "a\u2028b", "ab"],
    ["vertical tab is removed, not a space", "a\u000bb", "ab"],
    ["keeps case and punctuation", "Fix #2: Ünïcode — ok?", "Fix #2: Ünïcode — ok?"],
    ["keeps CJK and emoji", "记忆断裂 调查 😀", "记忆断裂 调查 😀"],
    ["keeps a numbered suffix", "Deploy #12", "Deploy #12"],
  ])("%s", (_label, input, expected) => {
    expect(sanitizeTitle(input)).toBe(expected);
  });

  describe("length (code points, after cleaning)", () => {
    it.each([
      ["100 ASCII characters", "a".repeat(100)],
      ["100 astral characters (200 UTF-16 units)", "😀".repeat(100)],
      ["100 characters once trimmed", `   ${"b".repeat(100)}   `],
      ["100 characters once invisible characters are removed", `${"c".repeat(100)}\u200b\u200b\u0000`],
      ["100 characters once whitespace is collapsed", `${"d".repeat(49)}      ${"e".repeat(50)}`],
    ])("%s is accepted", (_label, input) => {
      const out = sanitizeTitle(input);
      expect(out).not.toBeNull();
      expect([...(out ?? "")].length).toBe(MAX_TITLE_LENGTH);
    });

    it.each([
      ["101 ASCII characters", "a".repeat(101), 101],
      ["101 astral characters", "😀".repeat(101), 101],
      ["100 ASCII + 1 astral", `${"a".repeat(100)}😀`, 101],
      ["150 characters", "x".repeat(150), 150],
    ])("%s is TITLE_TOO_LONG", (_label, input, length) => {
      let caught: unknown;
      try {
        sanitizeTitle(input);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(TitleTooLongError);
      expect(caught).toBeInstanceOf(HermesStoreError);
      const error = caught as TitleTooLongError;
      expect(error.code).toBe("TITLE_TOO_LONG");
      expect(error.length).toBe(length);
      expect(error.maxLength).toBe(100);
      expect(error.message).toBe(`Title too long (${length} chars, max 100)`);
    });
  });

  it("MAX_TITLE_LENGTH is 100", () => {
    expect(MAX_TITLE_LENGTH).toBe(100);
  });

  it.each([
    ["a number", 42],
    ["an object", { title: "x" }],
    ["an array", ["x"]],
  ])("rejects %s with INVALID_ARGUMENT", (_label, input) => {
    expect(() => sanitizeTitle(input as unknown as string)).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT" }),
    );
  });
});
