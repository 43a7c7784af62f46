import { spawnSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

// Issue #43: the README's examples, run as written under vitest, leave no temp folder behind
// (one folder per test was left before `close` removed it: 554 folders, ~55 MB a run).

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const README = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const VITEST = join(ROOT, "node_modules", "vitest", "vitest.mjs");

/** The README's `ts` blocks that run the kit, by the file name in their first line. */
function examples(): Map<string, string> {
  const found = new Map<string, string>();
  for (const [, code] of README.matchAll(/```ts\n([\s\S]*?)```/g)) {
    const name = /^\/\/ test\/(\S+\.test\.ts)/.exec(code!)?.[1];
    if (name !== undefined && code!.includes("describeSessionStoreConformance(")) found.set(name, code!);
  }
  return found;
}

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const scratch = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};

/** A project holding `file` with the built packages linked in, as an install would put them. */
function project(file: string, code: string): string {
  const dir = scratch("hermes-kit-example-");
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "example", private: true, type: "module" }),
  );
  mkdirSync(join(dir, "node_modules", "@hermes"), { recursive: true });
  for (const pkg of ["conformance", "core", "store"]) {
    symlinkSync(join(ROOT, "packages", pkg), join(dir, "node_modules", "@hermes", pkg), "dir");
  }
  mkdirSync(join(dir, "test"));
  writeFileSync(join(dir, "test", file), code);
  return dir;
}

describe("the README's examples", { timeout: 600_000 }, () => {
  it("are the two documented ones", () => {
    expect([...examples().keys()]).toEqual(["conformance.test.ts", "audited.conformance.test.ts"]);
  });

  for (const [file, code] of examples()) {
    it(`${file} passes and leaves its temp folder as it found it`, () => {
      const dir = project(file, code);
      // The example's tmpdir(): a folder of its own, so anything left is the example's.
      const temp = scratch("hermes-kit-tmp-");
      const report = join(dir, "report.json");
      const r = spawnSync(
        process.execPath,
        [VITEST, "run", "--root", dir, "--reporter=json", `--outputFile=${report}`, "--testTimeout=60000"],
        { cwd: dir, encoding: "utf8", env: { ...process.env, TMPDIR: temp }, timeout: 540_000 },
      );
      const result = JSON.parse(readFileSync(report, "utf8")) as {
        success: boolean;
        numTotalTests: number;
        numPassedTests: number;
      };
      expect(result.success, r.stderr.slice(-2000)).toBe(true);
      expect(result.numTotalTests).toBeGreaterThanOrEqual(250);
      expect(readdirSync(temp)).toEqual([]);
    });
  }
});
