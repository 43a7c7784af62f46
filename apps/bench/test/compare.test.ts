import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { compareRounds } from "../dist/compare/compare-figures.js";

// `pnpm bench --compare <ref>`: the comparison of figures round by round, a real run of HEAD
// against HEAD (built for real in a temporary worktree) and the worktree's removal on Ctrl-C.
const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "bench-compare-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const compareWorktrees = () =>
  execFileSync("git", ["worktree", "list", "--porcelain"], { cwd: ROOT, encoding: "utf8" })
    .split("\n")
    .filter((line) => line.startsWith("worktree ") && line.includes("hermes-bench-compare-"));

function report(opsPerSec: number, p99Ms: number) {
  const figures = { n: 10, p50Ms: 1, p99Ms, maxMs: p99Ms, meanMs: 1, opsPerSec };
  return {
    scenario: "append",
    status: "ok",
    cases: [{ name: "appendMessage", status: "ok" as const, store: figures, baseline: figures, ratio: 1 }],
  };
}

describe("compareRounds", () => {
  it("divides each round's new figure by the same round's old one", () => {
    const figures = compareRounds(
      [report(100, 10), report(200, 10), report(50, 20)],
      [report(150, 5), report(200, 30), report(100, 20)],
    );
    const ops = figures.find((f) => f.figure === "store.opsPerSec")!;
    expect(ops.old).toEqual([100, 200, 50]);
    expect(ops.new).toEqual([150, 200, 100]);
    expect(ops.ratios).toEqual([1.5, 1, 2]);
    expect([ops.ratio, ops.ratioMin, ops.ratioMax]).toEqual([1.5, 1, 2]);
    expect(ops.higherIsBetter).toBe(true);
    const p99 = figures.find((f) => f.figure === "store.p99Ms")!;
    expect(p99.ratios).toEqual([0.5, 3, 1]);
    expect(p99.higherIsBetter).toBe(false);
  });

  it("leaves out a round where one side measured nothing", () => {
    const missing = { ...report(0, 0), cases: [] };
    const figures = compareRounds([report(100, 10), missing], [report(300, 10), report(100, 10)]);
    const ops = figures.find((f) => f.figure === "store.opsPerSec")!;
    expect(ops.old).toEqual([100, null]);
    expect(ops.ratios).toEqual([3]);
  });
});

describe("pnpm bench --compare", () => {
  it("builds HEAD in a worktree, runs both builds in turn and compares every round", () => {
    const out = join(scratch, "out");
    const run = spawnSync(
      process.execPath,
      [
        MAIN,
        "--compare",
        "HEAD",
        "--scenario",
        "group-commit",
        "--quick",
        "--rounds",
        "2",
        "--json",
        "--out",
        out,
        "--data",
        join(scratch, "data"),
      ],
      { cwd: ROOT, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } },
    );
    expect(run.status, run.stderr).toBe(0);
    const printed = JSON.parse(run.stdout);
    const written = JSON.parse(readFileSync(join(out, "compare.json"), "utf8"));
    expect(printed).toEqual(written);
    const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    expect(written.old).toEqual({ ref: "HEAD", commit: head });
    expect(written.rounds).toBe(2);
    expect(written.failures).toEqual([]);
    // Four runs, the two builds alternating, the first build of each round swapped.
    expect(written.loadAverages.map((l: { side: string }) => l.side)).toEqual(["old", "new", "new", "old"]);
    const ops = written.figures.filter((f: { figure: string }) => f.figure === "store.opsPerSec");
    expect(ops.length).toBeGreaterThanOrEqual(4); // one per level of callers
    for (const f of ops) {
      expect(f.old).toHaveLength(2);
      expect(f.new).toHaveLength(2);
      for (const side of [f.old, f.new]) for (const v of side) expect(v).toBeGreaterThan(0);
      expect(f.ratios).toEqual([f.new[0] / f.old[0], f.new[1] / f.old[1]]);
      expect(f.ratioMin).toBe(Math.min(...f.ratios));
      expect(f.ratioMax).toBe(Math.max(...f.ratios));
    }
    const table = readFileSync(join(out, "compare.md"), "utf8");
    expect(table).toContain("| group-commit | callers=1 | opsPerSec |");
    const dir = / in (\S+) \(log/.exec(run.stderr)?.[1];
    expect(dir, run.stderr).toBeDefined();
    expect(existsSync(dir!)).toBe(false);
    expect(compareWorktrees().filter((w) => w.includes(dir!))).toEqual([]);
  }, 900_000);

  it("removes the worktree when interrupted while building", async () => {
    const script = `
      import { buildRefWorktree } from ${JSON.stringify(new URL("../dist/compare/ref-worktree.js", import.meta.url).href)};
      await buildRefWorktree(${JSON.stringify(ROOT)}, "HEAD", {
        logFile: ${JSON.stringify(join(scratch, "interrupted.log"))},
        steps: { install: ["sleep", "60"], build: ["true"] },
        log: (m) => console.log(m),
      });`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT });
    let output = "";
    await new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk) => {
        output += String(chunk);
        if (output.includes("building HEAD")) resolve();
      });
    });
    const dir = /in (\S+) /.exec(output)?.[1];
    expect(dir).toBeDefined();
    expect(existsSync(join(dir!, "package.json"))).toBe(true);
    expect(compareWorktrees().filter((w) => w.includes(dir!))).toHaveLength(1);
    child.kill("SIGINT");
    const signal = await new Promise((resolve) => child.on("exit", (_code, s) => resolve(s)));
    expect(signal).toBe("SIGINT");
    expect(existsSync(dir!)).toBe(false);
    expect(compareWorktrees().filter((w) => w.includes(dir!))).toEqual([]);
  }, 60_000);
});
