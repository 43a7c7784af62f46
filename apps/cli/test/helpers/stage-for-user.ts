import { spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll } from "vitest";
import type { CliResult } from "./cli.js";

/**
 * Runs the built CLI as another user (`runuser -u nobody`). The repository may sit in a private
 * 0700 directory that user cannot enter, so its `node_modules` and `dist` are out of reach:
 * the CLI's runtime closure (its `dist`, every package it loads, symbolic links dereferenced,
 * workspace packages as their `dist` only, better-sqlite3 without its sources) is copied into
 * a world-readable temporary directory, once per test file.
 */

const here = dirname(fileURLToPath(import.meta.url));
const CLI_ROOT = resolve(here, "../..");

/** Why a test cannot run a command as `nobody` here, or `null`. */
export function otherUserUnavailable(): string | null {
  if (process.platform !== "linux") return "runuser needs Linux";
  if (process.getuid?.() !== 0) return "switching to another user (runuser -u nobody) needs root";
  const probe = spawnSync("runuser", ["-u", "nobody", "--", "true"], { encoding: "utf8" });
  if (probe.status !== 0) return `runuser -u nobody failed: ${probe.stderr.trim() || probe.error?.message}`;
  if (sharedTempRoot() === null) return "no temporary directory that every user can traverse";
  return null;
}

/** Every ancestor of `dir` (itself included) is traversable by other users. */
function traversableByOthers(dir: string): boolean {
  for (let d = resolve(dir); ; d = dirname(d)) {
    try {
      if ((statSync(d).mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
    if (dirname(d) === d) return true;
  }
}

/** A directory for files another user must reach: the temp dir when it can, else /tmp. */
export function sharedTempRoot(): string | null {
  for (const candidate of [tmpdir(), "/tmp"]) {
    if (existsSync(candidate) && traversableByOthers(candidate)) return candidate;
  }
  return null;
}

const staged: string[] = [];
afterAll(() => {
  for (const dir of staged.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory every user can read and traverse (0755), removed after the test file. */
export function sharedTempDir(prefix = "hermes-shared-"): string {
  const root = sharedTempRoot();
  if (root === null) throw new Error("no temporary directory that every user can traverse");
  const dir = mkdtempSync(join(root, prefix));
  chmodSync(dir, 0o755);
  staged.push(dir);
  return dir;
}

/** The real directory of package `name` as Node would resolve it from `fromDir`. */
function packageDir(name: string, fromDir: string): string | null {
  for (let d = fromDir; ; d = dirname(d)) {
    const candidate = join(d, "node_modules", ...name.split("/"));
    if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
    if (dirname(d) === d) return null;
  }
}

/** What of a package the CLI needs at run time. */
function keep(pkgDir: string, name: string, file: string): boolean {
  const rel = relative(pkgDir, file);
  if (rel === "") return true;
  const top = rel.split(sep)[0] ?? "";
  if (top === "node_modules") return false;
  // Workspace packages: their build only.
  if (!pkgDir.split(sep).includes("node_modules")) {
    return top === "package.json" || top === "dist";
  }
  if (name === "better-sqlite3") {
    // The addon and its loader: not the sources, nor the build's objects.
    if (top === "deps" || top === "src") return false;
    if (top === "build") {
      return (
        rel === "build" ||
        rel === join("build", "Release") ||
        rel === join("build", "Release", "better_sqlite3.node")
      );
    }
  }
  return true;
}

/** Opens every copied file and directory to all users (read, and traverse for directories). */
function openToAll(dir: string): void {
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    const st = lstatSync(p);
    if (st.isDirectory()) {
      chmodSync(p, 0o755);
      openToAll(p);
    } else if (st.isFile()) chmodSync(p, (st.mode & 0o777) | 0o444);
  }
}

/**
 * Copies `name` (found at `srcDir`) to `destModules/name`, then its dependencies beside it
 * (or inside it when a different copy of the same name is already there).
 */
function stagePackage(name: string, srcDir: string, destModules: string, done: Map<string, string>): void {
  const dest = join(destModules, ...name.split("/"));
  mkdirSync(dirname(dest), { recursive: true });
  cpSync(srcDir, dest, { recursive: true, dereference: true, filter: (f) => keep(srcDir, name, f) });
  done.set(dest, srcDir);
  const manifest = JSON.parse(readFileSync(join(srcDir, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  const deps = { ...manifest.dependencies, ...manifest.optionalDependencies };
  for (const dep of Object.keys(deps)) {
    const depDir = packageDir(dep, srcDir);
    if (depDir === null) continue; // an optional dependency not installed
    const top = join(destModules, ...dep.split("/"));
    const there = done.get(top);
    if (there === depDir) continue;
    // A different version already holds the top-level name: nest this one under its user.
    const target = there === undefined ? destModules : join(dest, "node_modules");
    if (done.get(join(target, ...dep.split("/"))) === depDir) continue;
    stagePackage(dep, depDir, target, done);
  }
}

/** The built CLI, copied with its runtime closure where any user can run it. */
export interface StagedCli {
  /** The staged copy's entry point. */
  readonly main: string;
  /** Runs the staged CLI as `user` with `args`, from the staged directory. */
  runAs(user: string, args: string[], env?: Record<string, string>): CliResult;
}

let cached: StagedCli | undefined;

/** Stages the built CLI (`apps/cli/dist`) for another user; once per test file. */
export function stageCliForUser(): StagedCli {
  if (cached !== undefined) return cached;
  const root = sharedTempDir("hermes-cli-stage-");
  const app = join(root, "cli");
  mkdirSync(app);
  cpSync(join(CLI_ROOT, "dist"), join(app, "dist"), { recursive: true, dereference: true });
  cpSync(join(CLI_ROOT, "package.json"), join(app, "package.json"));
  const modules = join(root, "node_modules");
  const done = new Map<string, string>();
  const manifest = JSON.parse(readFileSync(join(CLI_ROOT, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  for (const dep of Object.keys(manifest.dependencies)) {
    const dir = packageDir(dep, CLI_ROOT);
    if (dir === null) throw new Error(`cannot stage ${dep}: not installed`);
    if (done.get(join(modules, ...dep.split("/"))) !== dir) stagePackage(dep, dir, modules, done);
  }
  openToAll(root);
  const main = join(app, "dist", "main.js");
  cached = {
    main,
    runAs(user, args, env = {}) {
      const home = join(root, "home");
      const r = spawnSync("runuser", ["-u", user, "--", process.execPath, main, ...args], {
        cwd: root,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TZ: "UTC", HERMES_HOME: home, HOME: home, ...env },
        encoding: "utf8",
        timeout: 60_000,
      });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    },
  };
  return cached;
}
