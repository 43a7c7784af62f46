import { describe, expect, it } from "vitest";
import { cliOn, copyOfSample, oneErrorLine } from "./helpers/cli.js";

describe("paging and other counts: one check, bad usage exits 2", { timeout: 120_000 }, () => {
  it("--limit 0 is refused rather than printing 'No sessions.' or 'No matches' about nothing looked at", () => {
    const db = copyOfSample();
    for (const args of [
      ["list", "--limit", "0"],
      ["search", "docker", "--limit", "0"],
      ["list", "-n", "0", "--json"],
    ]) {
      const r = cliOn(db, args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
      expect(oneErrorLine(r)).toBe("error: --limit must be at least 1, got 0");
    }
  });

  it("a value over a command's limit exits 2 with the limit named, in list and search alike", () => {
    const db = copyOfSample();
    const cases: Array<[string[], string]> = [
      [["list", "--limit", "100001"], "error: --limit must be at most 100,000, got '100001'"],
      [["search", "docker", "--limit", "1001"], "error: --limit must be at most 1,000, got '1001'"],
      [
        ["list", "--offset", "100000000000000000"],
        "error: --offset must be at most 9,007,199,254,740,991, got '100000000000000000'",
      ],
      [
        ["search", "docker", "--offset", "100000000000000000"],
        "error: --offset must be at most 9,007,199,254,740,991, got '100000000000000000'",
      ],
      [["follow", "--interval", "5"], "error: --interval must be at least 10, got 5"],
      [["serve", "--port", "70000"], "error: --port must be at most 65,535, got '70000'"],
    ];
    for (const [args, message] of cases) {
      const r = cliOn(db, args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(oneErrorLine(r)).toBe(message);
    }
    // The largest accepted value works.
    const all = cliOn(db, ["list", "--limit", "100000", "--json"]);
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout).length).toBeGreaterThan(0);
    expect(cliOn(db, ["search", "docker", "--limit", "1000", "--json"]).code).toBe(0);
  });

  it("--help gives each command's range of --limit", () => {
    const db = copyOfSample();
    expect(cliOn(db, ["list", "--help"]).stdout).toMatch(
      /--limit <n>\s+at most this many sessions \(1–100,000\)/,
    );
    expect(cliOn(db, ["search", "--help"]).stdout).toMatch(
      /--limit <n>\s+at most this many hits \(1–1,000\)/,
    );
  });
});
