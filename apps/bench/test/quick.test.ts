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
  "fork",
  "migrate",
  "web",
];

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
  }, 900_000);

  it("refuses an unknown scenario with exit code 2", () => {
    const run = spawnSync(process.execPath, [MAIN, "--scenario", "nope", "--out", out], { encoding: "utf8" });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("Unknown scenario(s): nope");
  });
});
