import {
  formatUsd,
  renderToolCallSnippet,
  sessionDisplayName,
  snippetParts,
  UNTITLED_SESSION,
} from "@hermes/core";
import { describe, expect, it } from "vitest";

// The display rules the CLI and the web share (issue 43): one name per session, one money
// format, one rendering of a search hit inside a tool call.

describe("sessionDisplayName", () => {
  it.each([
    ["the title", { title: "Fix Docker Build", preview: "My docker build fails" }, "Fix Docker Build"],
    ["a numbered title as it is", { title: "Fix Docker Build #2" }, "Fix Docker Build #2"],
    ["the preview when untitled", { title: null, preview: "My docker build fails" }, "My docker build fails"],
    ["the preview when the title is blank", { title: " \t ", preview: "hello" }, "hello"],
    ["a cut preview with its dots", { title: null, preview: `${"a".repeat(60)}...` }, `${"a".repeat(60)}...`],
    ["one line of a title", { title: "two\nlines\t here" }, "two lines here"],
    ["one line of a preview", { title: null, preview: "  first\r\nsecond  " }, "first second"],
    ["(untitled) without either", { title: null, preview: "" }, UNTITLED_SESSION],
    ["(untitled) without a preview key", { title: null }, "(untitled)"],
    ["(untitled) for a blank preview", { title: null, preview: "   " }, "(untitled)"],
  ])("%s", (_, session, name) => {
    expect(sessionDisplayName(session)).toBe(name);
  });

  it("never names a session by its id", () => {
    const row = { id: "20260103_080000_dc0001", title: null, preview: "" };
    expect(sessionDisplayName(row)).not.toContain(row.id);
  });
});

describe("formatUsd", () => {
  it.each([
    [1.579, "$1.5790"],
    [1.1846, "$1.1846"],
    [0, "$0.0000"],
    [0.00012, "$0.0001"],
    [0.00005, "$0.0001"],
    [12.3, "$12.3000"],
    [1234.5, "$1,234.5000"],
    [-0.5, "-$0.5000"],
  ])("%s → %s", (amount, text) => {
    expect(formatUsd(amount)).toBe(text);
  });

  it("gives every amount four decimals", () => {
    for (const amount of [0.1, 0.12, 0.123, 0.1234, 0.12345, 3, 99.9])
      expect(formatUsd(amount)).toMatch(/^\$\d+\.\d{4}$/);
  });
});

describe("renderToolCallSnippet", () => {
  const call = (args: string) =>
    JSON.stringify([{ id: "c1", type: "function", function: { name: "terminal", arguments: args } }]);

  it("renders a whole tool_calls value as the calls, keeping the match markers", () => {
    expect(renderToolCallSnippet(call('{"cmd": ">>>docker<<< build ."}'))).toBe(
      'terminal({"cmd": ">>>docker<<< build ."})',
    );
  });

  it("renders a snippet cut at both ends as far as it goes", () => {
    const whole = call('{"cmd": ">>>docker<<< build . && docker push"}');
    const cut = `...${whole.slice(20, 110)}...`;
    expect(renderToolCallSnippet(cut)).toMatch(/^…?terminal\(\{"cmd": ">>>docker<<< build/);
    expect(renderToolCallSnippet(cut)).not.toContain('"type"');
  });

  it("leaves any other snippet alone", () => {
    expect(renderToolCallSnippet("run >>>docker<<< build")).toBe("run >>>docker<<< build");
  });
});

describe("snippetParts", () => {
  it("cuts FTS5 markers into matches", () => {
    expect(snippetParts("run >>>docker<<< build, >>>docker<<<", "docker")).toEqual([
      { text: "run ", match: false },
      { text: "docker", match: true },
      { text: " build, ", match: false },
      { text: "docker", match: true },
    ]);
  });

  it("finds the query's terms in a snippet without markers (CJK), longest first, any case", () => {
    expect(snippetParts("我想去桂林旅游 Guilin", "桂林 guilin")).toEqual([
      { text: "我想去", match: false },
      { text: "桂林", match: true },
      { text: "旅游 ", match: false },
      { text: "Guilin", match: true },
    ]);
    expect(snippetParts("no terms here", "OR")).toEqual([{ text: "no terms here", match: false }]);
  });

  it("marks a query's words without FTS5 operators, quotes and stars", () => {
    expect(
      snippetParts("deployed: connection refused, OR not", '"connection refused" OR deploy* NOT x'),
    ).toEqual([
      { text: "deploy", match: true },
      { text: "ed: ", match: false },
      { text: "connection", match: true },
      { text: " ", match: false },
      { text: "refused", match: true },
      { text: ", OR not", match: false },
    ]);
  });
});
