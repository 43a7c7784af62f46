import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** Absolute path of a script in `test/child/`. */
export function childScript(name: string): string {
  return join(here, "..", "child", name);
}

/** A running child process with its output collected line by line. */
export interface RunningChild {
  readonly process: ChildProcess;
  /** Lines printed on stdout so far. */
  readonly lines: string[];
  /** Resolves with the first stdout line equal to `line` (rejects if the child exits first). */
  waitForLine(line: string): Promise<void>;
  /** Resolves when the child exits, with its code, signal and stderr. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  /** The last stdout line parsed as JSON (the scripts' result line). */
  result<T>(): T;
}

/** Starts `node test/child/<script> ...args`. */
export function startChild(script: string, args: readonly string[]): RunningChild {
  const child = spawn(process.execPath, [childScript(script), ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const waiters: Array<{ line: string; resolve: () => void; reject: (e: Error) => void }> = [];
  let stderr = "";
  let buffered = "";
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    buffered += chunk;
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      for (const w of waiters.filter((w) => w.line === line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve) => {
      child.on("exit", (code, signal) => {
        // Let the last stdout chunk arrive before anyone reads `lines`.
        setImmediate(() => {
          for (const w of waiters.splice(0)) {
            w.reject(
              new Error(`${script} exited (${code ?? signal}) before printing '${w.line}': ${stderr}`),
            );
          }
          resolve({ code, signal, stderr });
        });
      });
    },
  );
  return {
    process: child,
    lines,
    exited,
    waitForLine(line) {
      if (lines.includes(line)) return Promise.resolve();
      return new Promise((resolve, reject) => waiters.push({ line, resolve, reject }));
    },
    result<T>() {
      const last = lines.at(-1);
      if (last === undefined) throw new Error(`${script} printed nothing; stderr: ${stderr}`);
      return JSON.parse(last) as T;
    },
  };
}

/** Runs a child to completion; fails with its stderr when it exits non-zero. */
export async function runChild<T>(script: string, args: readonly string[]): Promise<T> {
  const child = startChild(script, args);
  const { code, signal, stderr } = await child.exited;
  if (code !== 0) throw new Error(`${script} exited with ${code ?? signal}: ${stderr}`);
  return child.result<T>();
}
