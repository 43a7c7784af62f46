import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type CliResult, cliOn, tempDir } from "./helpers/cli.js";

// What the CLI shows of a newer agent's file (schema v30, and v31 with stable message ids),
// as the agent shows it: counts of what is listed, marks, the compaction point, uids. Rows
// asserted are those of shared/fixtures/UPSTREAM.md.
const here = dirname(fileURLToPath(import.meta.url));
const FIXTURES = resolve(here, "../../../packages/store/test/fixtures/reference");
const V30 = join(FIXTURES, "hermes-v30-sample.db");
const V31 = join(FIXTURES, "hermes-v31-sample.db");

const DC = "20260103_080000_dc0001";
const CLI001 = "20260101_090000_cli001"; // pinned, ended
const CLI002 = "20260101_093000_cli002"; // pinned, ended
const CRON = "20260106_000000_cron"; // v31: auto-archived
const ARCHIVED = "20260106_000000_homeassistant";
const HIDDEN = "20260106_000000_matrix";

/** The file's bytes, mode and folder listing: what every reading command must leave as it was. */
function state(path: string) {
  return {
    sha256: createHash("sha256").update(readFileSync(path)).digest("hex"),
    mode: (statSync(path).mode & 0o7777).toString(8),
    listing: readdirSync(dirname(path)).sort(),
  };
}

/** Runs the CLI on a fresh copy of `fixture` and checks that the copy is unchanged. */
function run(fixture: string, args: string[], code = 0): CliResult {
  const path = join(tempDir(), "state.db");
  copyFileSync(fixture, path);
  chmodSync(path, 0o600);
  const before = state(path);
  const r = cliOn(path, args);
  expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(code);
  expect(state(path), args.join(" ")).toEqual(before);
  return r;
}

const json = <T>(fixture: string, args: string[]): T => JSON.parse(run(fixture, args).stdout) as T;

describe.each([
  ["v30", V30],
  ["v31", V31],
])("doctor on a newer agent's file (%s)", { timeout: 120_000 }, (_name, fixture) => {
  it("gives the short-CJK index's advice once, and only what is true of a file it never writes", () => {
    const text = run(fixture, ["doctor"]).stdout;
    expect(text).not.toContain("created on the first short CJK search");
    expect(text).not.toContain("at the first 1–2-character CJK search");
    const report = json<{ checks: Array<{ name: string; detail: string }> }>(fixture, ["doctor", "--json"]);
    const cjk = report.checks.filter((c) => /cjk/i.test(c.name) || /CJK/.test(c.detail));
    expect(cjk.map((c) => c.name)).toEqual(["side index short-CJK"]);
    expect(cjk[0]?.detail).toMatch(
      /^not built, and never built here: the file belongs to a newer Hermes Agent \(schema 3[01]\)/,
    );
    expect(cjk[0]?.detail).toContain("scan the messages instead");
  });
});
