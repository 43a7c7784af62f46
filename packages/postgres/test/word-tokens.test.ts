import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { searchColumns } from "../dist/search/pg-search-text.js";
import { eachWord, wordTokensAt } from "../dist/search/word-tokens.js";

/** `unicode61`'s words by one regex over the whole text: the definition `eachWord` must keep. */
function regexTokens(text: string) {
  const out: Array<{ text: string; start: number; end: number }> = [];
  for (const m of text.matchAll(/[\p{L}\p{N}\p{Co}]+/gu)) {
    const folded = m[0]
      .toLowerCase()
      .normalize("NFD")
      .replace(/\p{M}+/gu, "");
    if (folded.length > 0) out.push({ text: folded, start: m.index, end: m.index + m[0].length });
  }
  return out;
}

/** Pieces that meet at every kind of boundary: ASCII, accents, marks, CJK, surrogates, private use. */
const PIECES = [
  "a",
  "Z",
  "9",
  "Docker",
  "kubectl_rollout",
  "P2.2",
  "chat-send",
  " ",
  "\n",
  ".",
  "'",
  "-",
  "_",
  "é",
  "É",
  "e\u0301",
  "\u0301",
  "ß",
  "İ",
  "Σ",
  "ΣΑΣ",
  "ﬁ",
  "ǅ",
  "ª",
  "²",
  "½",
  "٣",
  "数据库",
  "桂林",
  "。",
  "，",
  "ｄｏｃｋｅｒ",
  "😀",
  "𝐀",
  "𠀀",
  "\ud800",
  "\udc00",
  "\ue000",
  "\u200b",
  "\u00a0",
  "ﾃ",
];

describe("word tokens", () => {
  it("are the runs one Unicode regex finds, folded, for any mix of scripts", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ unit: "binary" })), { maxLength: 12 }),
        (parts) => {
          const text = parts.join("");
          expect(wordTokensAt(text)).toEqual(regexTokens(text));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("fold case and diacritics at ASCII and non-ASCII boundaries", () => {
    expect(wordTokensAt("Fix DOCKER-build, Zéphyrine’s café #2")).toEqual([
      { text: "fix", start: 0, end: 3 },
      { text: "docker", start: 4, end: 10 },
      { text: "build", start: 11, end: 16 },
      { text: "zephyrine", start: 18, end: 27 },
      { text: "s", start: 28, end: 29 },
      { text: "cafe", start: 30, end: 34 },
      { text: "2", start: 36, end: 37 },
    ]);
  });

  it("stop when the visitor returns false", () => {
    const seen: string[] = [];
    eachWord("one two three four", (word) => {
      seen.push(word);
      return seen.length < 2 ? undefined : false;
    });
    expect(seen).toEqual(["one", "two"]);
  });

  it("number a message's words across its columns as before", () => {
    expect(searchColumns("Hello Wörld", '{"cmd":"ls"}', "terminal").vector).toBe(
      "'hello':1 'world':2 'cmd':4 'ls':5 'terminal':7",
    );
  });
});
