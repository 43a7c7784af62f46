import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A command to run in the worktree: the program and its arguments. */
export type Command = readonly [string, ...string[]];

/** How the other build is installed and built (the repository's own steps by default). */
export interface BuildSteps {
  readonly install: Command;
  readonly build: Command;
}

export const DEFAULT_BUILD_STEPS: BuildSteps = {
  install: ["npx", "-y", "pnpm@10", "install", "--frozen-lockfile"],
  build: ["npx", "-y", "pnpm@10", "build"],
};

/** A built checkout of a git ref in a temporary worktree; `remove()` takes it away again. */
export interface RefWorktree {
  readonly ref: string;
  /** The full commit the ref named. */
  readonly commit: string;
  readonly dir: string;
  remove(): void;
}

function git(repo: string, args: string[]): string {
  return execFileSync("git", args, { cwd: repo, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/** The install or build step under way, ended on an interrupt. */
let step: ChildProcess | undefined;

/** Runs `command` in `cwd`, appending its output to `log`; rejects with the log's name when it fails. */
function runLogged(command: Command, cwd: string, log: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(log, { flags: "a" });
    out.write(`\n$ ${command.join(" ")}\n`);
    const child = spawn(command[0], command.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"] });
    step = child;
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.on("error", (error) => out.end(() => reject(error)));
    child.on("close", (code, signal) => {
      step = undefined;
      out.end(() =>
        code === 0
          ? resolve()
          : reject(new Error(`\`${command.join(" ")}\` failed (${signal ?? `exit ${code}`}); see ${log}`)),
      );
    });
  });
}

/**
 * Checks `ref` out into a temporary git worktree (detached) of the repository at `repo`, then
 * installs and builds it there (their output goes to `logFile`). The worktree is removed again by `remove()`, when the install or
 * build fails, and when the process is interrupted (SIGINT, SIGTERM) before `remove()` ran.
 */
export async function buildRefWorktree(
  repo: string,
  ref: string,
  options: { logFile: string; steps?: BuildSteps; log?: (message: string) => void },
): Promise<RefWorktree> {
  const { logFile, steps = DEFAULT_BUILD_STEPS, log = () => {} } = options;
  const commit = git(repo, ["rev-parse", "--verify", `${ref}^{commit}`]);
  const parent = mkdtempSync(join(tmpdir(), "hermes-bench-compare-"));
  const dir = join(parent, "tree");
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    // Synchronous, so that it also completes inside a signal handler.
    spawnSync("git", ["worktree", "remove", "--force", dir], { cwd: repo, stdio: "ignore" });
    rmSync(parent, { recursive: true, force: true });
    spawnSync("git", ["worktree", "prune"], { cwd: repo, stdio: "ignore" });
  };
  function onSignal(signal: NodeJS.Signals) {
    step?.kill("SIGTERM");
    remove();
    process.kill(process.pid, signal);
  }
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    git(repo, ["worktree", "add", "--detach", dir, commit]);
    log(`building ${ref} (${commit.slice(0, 10)}) in ${dir} (log: ${logFile})`);
    await runLogged(steps.install, dir, logFile);
    await runLogged(steps.build, dir, logFile);
  } catch (error) {
    remove();
    throw error;
  }
  return { ref, commit, dir, remove };
}
