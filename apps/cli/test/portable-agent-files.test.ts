import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cliOn, tempDir } from "./helpers/cli.js";
import { jsonlCounts } from "./helpers/jsonl-counts.js";

// `export` and `import` of a newer agent's files: what the export says it wrote is what the file
// holds, and an import into our v11 file says what it skips and leaves out.
const here = dirname(fileURLToPath(import.meta.url));
const FIXTURES = resolve(here, "../../../packages/store/test/fixtures/reference");
const V30_SAMPLE_DB = join(FIXTURES, "hermes-v30-sample.db");
const V31_SAMPLE_DB = join(FIXTURES, "hermes-v31-sample.db");

function state(path: string) {
  return {
    sha256: createHash("sha256").update(readFileSync(path)).digest("hex"),
    mode: (statSync(path).mode & 0o7777).toString(8),
    listing: readdirSync(dirname(path)).sort(),
  };
}

function copy(fixture: string): string {
  const path = join(tempDir(), "state.db");
  copyFileSync(fixture, path);
  chmodSync(path, 0o644);
  return path;
}

describe("export and import of a newer agent's file", { timeout: 120_000 }, () => {
  it.each([
    ["v30", V30_SAMPLE_DB, 117],
    ["v31", V31_SAMPLE_DB, 118],
  ])("%s: export says how many sessions and messages it wrote, all of them", (_name, fixture, messages) => {
    const path = copy(fixture);
    const before = state(path);
    const out = join(tempDir(), "all.jsonl");
    const r = cliOn(path, ["export", "--out", out, "--include-archived", "--include-hidden"]);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonlCounts(out)).toEqual({ sessions: 15, messages });
    expect(r.stderr).toBe(`Exported 15 sessions with ${messages} messages to ${out}\n`);
    expect(state(path)).toEqual(before);
  });

  it.each([
    ["v30", V30_SAMPLE_DB, ["20260106_000000_homeassistant", "20260106_000000_matrix"]],
    [
      "v31",
      V31_SAMPLE_DB,
      ["20260106_000000_cron", "20260106_000000_homeassistant", "20260106_000000_matrix"],
    ],
  ])(
    "%s: export leaves out what list leaves out, and says so; a session named on its own is exported",
    (_name, fixture, flagged) => {
      const path = copy(fixture);
      const out = join(tempDir(), "listed.jsonl");
      const r = cliOn(path, ["export", "--out", out]);
      expect(r.code, r.stderr).toBe(0);
      const ids = readFileSync(out, "utf8")
        .trimEnd()
        .split("\n")
        .slice(1)
        .map((l) => (JSON.parse(l) as { id: string }).id);
      expect(ids).toHaveLength(15 - flagged.length);
      for (const id of flagged) expect(ids).not.toContain(id);
      expect(r.stderr).toContain(
        `Left out ${flagged.length} sessions a newer agent flags archived or hidden`,
      );
      const archived = cliOn(path, ["export", "--out", join(tempDir(), "a.jsonl"), "--include-archived"]);
      expect(archived.stderr).toContain("Left out 1 session a newer agent flags archived or hidden");
      const one = join(tempDir(), "one.jsonl");
      expect(cliOn(path, ["export", flagged[0]!, "--out", one]).code).toBe(0);
      expect(jsonlCounts(one).sessions).toBe(1);
      // The selection flags still combine with a named session: not of that source, not exported.
      const none = join(tempDir(), "none.jsonl");
      expect(cliOn(path, ["export", flagged[0]!, "--source", "cli", "--out", none]).code).toBe(0);
      expect(jsonlCounts(none).sessions).toBe(0);
    },
  );

  it("import into a v11 file skips archived and hidden sessions unless asked and lists what it leaves out", () => {
    const source = copy(V31_SAMPLE_DB);
    const out = join(tempDir(), "all.jsonl");
    expect(cliOn(source, ["export", "--out", out, "--include-archived", "--include-hidden"]).code).toBe(0);
    const target = join(tempDir(), "state.db");
    const first = cliOn(target, ["import", out]);
    expect(first.code, first.stderr).toBe(0);
    const text = first.stdout;
    // 118 rows, less the 4 superseded ones and the one message of each of the 3 skipped sessions.
    expect(text).toContain("Imported 12 sessions with 111 messages");
    expect(text).toContain("skipped: 2 archived sessions (use --include-archived to import them)");
    expect(text).toContain("skipped: 1 hidden session (use --include-hidden to import them)");
    expect(text).toMatch(
      /left out \(this database cannot hold them\): .*4 superseded messages \(rewound or replaced\)/,
    );
    expect(text).toContain("pinned on 2 sessions");
    const listed = JSON.parse(cliOn(target, ["list", "--json", "--limit", "100"]).stdout) as Array<{
      id: string;
    }>;
    expect(listed.map((s) => s.id)).not.toContain("20260106_000000_cron");

    const again = JSON.parse(cliOn(target, ["import", out, "--json"]).stdout) as {
      sessionsImported: number;
      conflicts: unknown[];
    };
    expect(again).toMatchObject({ sessionsImported: 0, conflicts: [] });

    const all = cliOn(target, ["import", out, "--include-archived", "--include-hidden"]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain("Imported 3 sessions");
    expect(all.stdout).not.toContain("skipped:");
  });
});
