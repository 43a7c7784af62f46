import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

// The smoke test CI runs: every scenario at the quick scale, through the built CLI, in a real
// child process. It checks what the run produces, never how fast anything was.
const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const SCENARIOS = [
  "append",
  "group-commit",
  "contention",
  "resume",
  "list",
  "change-feed",
  "search",
  "cjk-build",
  "reads",
  "export",
  "backup",
  "fork",
  "migrate",
  "web",
];

interface PostgresCase {
  name: string;
  status: string;
  note?: string;
  store: { n: number } | null;
  baseline: { n: number } | null;
  extra?: Record<string, number | string>;
}

/**
 * The `postgres` scenario has its own rule: its appends and searches have the SQLite store as
 * their baseline and must lose, duplicate or fail nothing; each search query must find as many
 * hits on both backends; the `migrate-to-postgres` case has no baseline (nothing to compare
 * with) but must copy every message of the data set.
 */
function checkPostgresReport(report: { scenario: string; cases: PostgresCase[]; notes: string[] }): void {
  expect(report.scenario).toBe("postgres");
  const byName = new Map(report.cases.map((c) => [c.name, c]));
  const appends = byName.get("appends (8 processes)");
  expect(appends?.status, appends?.note).toBe("ok");
  expect(appends?.store?.n).toBeGreaterThan(0);
  expect(appends?.baseline?.n).toBeGreaterThan(0);
  expect(appends?.extra).toMatchObject({
    lost: 0,
    duplicated: 0,
    counterMismatches: 0,
    errors: 0,
    sqliteLost: 0,
  });
  expect(appends?.extra?.rows).toBe(appends?.extra?.expected);
  const searches = byName.get("concurrent searches (2 processes)");
  expect(searches?.status, searches?.note).toBe("ok");
  expect(searches?.extra?.errors).toBe(0);
  const queries = report.cases.filter((c) => c.name.startsWith("search: "));
  expect(queries).toHaveLength(9);
  for (const q of queries) {
    expect(q.status, `${q.name}: ${q.note}`).toBe("ok");
    expect(q.store?.n, q.name).toBeGreaterThan(0);
    expect(q.baseline?.n, q.name).toBeGreaterThan(0);
    expect(q.extra?.pgHits, q.name).toBe(q.extra?.sqliteHits);
  }
  const migrate = byName.get("migrate-to-postgres (CLI)");
  expect(migrate?.status, migrate?.note).toBe("ok");
  const dataSet = report.notes.map((n) => /^Data set: ([\d,]+) messages/.exec(n)?.[1]).find(Boolean);
  expect(dataSet, "the report names its data set").toBeDefined();
  expect(migrate?.extra?.messages).toBe(Number(dataSet?.replaceAll(",", "")));
  expect(migrate?.extra?.messagesPerSecond).toBeGreaterThan(0);
}

describe("pnpm bench --quick", () => {
  const root = mkdtempSync(join(tmpdir(), "hermes-bench-"));
  const out = join(root, "results");
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("exits 0 and writes a JSON report and an SVG chart per scenario", () => {
    const run = spawnSync(process.execPath, [MAIN, "--quick", "--out", out, "--data", join(root, "data")], {
      encoding: "utf8",
      timeout: 900_000,
    });
    expect(run.error).toBeUndefined();
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain("| scenario | case |");
    expect(existsSync(join(out, "summary.md"))).toBe(true);
    // The generator builds each data file under a temporary name: nothing of it stays behind.
    expect(readdirSync(join(root, "data")).filter((name) => name.includes(".tmp-"))).toEqual([]);
    for (const name of SCENARIOS) {
      const report = JSON.parse(readFileSync(join(out, `${name}.json`), "utf8"));
      expect(report.scenario).toBe(name);
      expect(report.machine.sqlite).toMatch(/^3\.\d+/);
      expect(report.machine.cores).toBeGreaterThan(0);
      expect(report.cases.length).toBeGreaterThan(0);
      for (const c of report.cases) {
        // The baseline is always measured; our side is either measured or honestly missing.
        expect(c.baseline?.n, `${name}/${c.name}`).toBeGreaterThan(0);
        expect(["ok", "unavailable"], `${name}/${c.name}: ${c.note}`).toContain(c.status);
        if (c.status === "unavailable") {
          expect(c.store).toBeNull();
          expect(c.note).toMatch(/^not available yet/);
        } else {
          expect(c.store.n).toBeGreaterThan(0);
          expect(c.ratio).toBeGreaterThan(0);
        }
      }
      const svg = readFileSync(join(out, `${name}.svg`), "utf8");
      expect(svg.startsWith("<svg")).toBe(true);
    }
    checkPostgresReport(JSON.parse(readFileSync(join(out, "postgres.json"), "utf8")));
    expect(readFileSync(join(out, "postgres.svg"), "utf8").startsWith("<svg")).toBe(true);
  }, 900_000);

  it("refuses an unknown scenario with exit code 2", () => {
    const run = spawnSync(process.execPath, [MAIN, "--scenario", "nope", "--out", out], { encoding: "utf8" });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("Unknown scenario(s): nope");
  });
});
