import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

// Issue #43: the README's quick start, run as a new user would: saved under the name the README
// gives, in a project made by `npm init -y` ("type": "commonjs"), against the built packages.

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** The quick start section: the file name it tells the user to save as, and its code. */
function quickStart(): { fileName: string; code: string } {
  const section = README.slice(
    README.indexOf("## Quick start"),
    README.indexOf("\n## ", README.indexOf("## Quick start") + 1),
  );
  const fileName = /Save this as `([^`]+)`/.exec(section)?.[1];
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (fileName === undefined || code === undefined)
    throw new Error("the README's quick start has no file name or no code");
  return { fileName, code };
}

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An empty project as `npm init -y` writes it, with the built `@hermes/store` installed. */
function newProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-quick-start-"));
  made.push(dir);
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "quick", version: "1.0.0", main: "index.js", type: "commonjs" }, null, 2),
  );
  mkdirSync(join(dir, "node_modules", "@hermes"), { recursive: true });
  symlinkSync(join(ROOT, "packages", "store"), join(dir, "node_modules", "@hermes", "store"), "dir");
  return dir;
}

const run = (dir: string, file: string) =>
  spawnSync(process.execPath, [file], {
    cwd: dir,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, HERMES_HOME: dir },
  });

describe("README quick start", { timeout: 120_000 }, () => {
  it("runs as the file the README names, in a fresh `npm init -y` project, and finds what it wrote", () => {
    const { fileName, code } = quickStart();
    expect(fileName).toMatch(/\.mjs$/);
    const dir = newProject();
    writeFileSync(join(dir, fileName), code);
    const r = run(dir, fileName);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(">>>Docker<<<");
    expect(r.stdout).toContain("snippet: '记忆断裂的问题也要查'");
  });

  it("the same code saved as .js fails there, as the README warns", () => {
    const { code } = quickStart();
    const dir = newProject();
    writeFileSync(join(dir, "quickstart.js"), code);
    const r = run(dir, "quickstart.js");
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("Cannot use import statement outside a module");
    expect(README).toContain("Cannot use import statement outside a module");
  });
});

describe("README contributing quickstart", () => {
  it("says how long the test command takes and what it needs, as .ci/run installs it", () => {
    const start = README.indexOf("## Contributing: quickstart");
    const section = README.slice(start, README.indexOf("\n## ", start + 1));
    expect(section).toMatch(/takes about \d+–\d+ minutes on an idle 2-core machine/);
    const ci = readFileSync(join(ROOT, ".ci", "run"), "utf8");
    // Each thing the README says the tests need is what .ci/run installs when missing.
    const needs: Array<[RegExp, string]> = [
      [/PostgreSQL's server/, "missing+=(postgresql)"],
      [/RUM extension/, 'missing+=("postgresql-$major-rum")'],
      [/Chromium/, "missing+=(chromium)"],
      [/CJK fonts/, "missing+=(fonts-noto-cjk)"],
      [/zsh and fish/, "missing+=(zsh)"],
      [/zsh and fish/, "missing+=(fish)"],
    ];
    for (const [said, installed] of needs) {
      expect(section).toMatch(said);
      expect(ci).toContain(installed);
    }
    expect(section).toContain("bash .ci/run");
  });
});
