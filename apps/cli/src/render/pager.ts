import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import type { Writable } from "node:stream";

/** Where long output goes: a pager's input, or stdout. `done()` waits for the pager to exit. */
export interface PagedOutput {
  readonly stream: Writable;
  /** Whether the reader quit the pager before the end (stop writing). */
  readonly closed: () => boolean;
  done(): Promise<void>;
}

/**
 * A pager for long output on a terminal, as git does: `$PAGER` (run by the shell, so it may
 * carry arguments), else `less`, with `LESS=FRX` unless set (quit if one screen, keep colours,
 * leave the text on screen). No pager when stdout is not a terminal, with `enabled: false`, or
 * when `$PAGER` is empty or `cat`.
 */
export function openPager(enabled: boolean): PagedOutput {
  const direct: PagedOutput = { stream: process.stdout, closed: () => false, done: async () => {} };
  const command = process.env.PAGER ?? "less";
  if (!enabled || process.stdout.isTTY !== true || command.trim() === "" || command.trim() === "cat") {
    return direct;
  }
  let child: ChildProcess;
  try {
    child = spawn(command, {
      shell: true,
      stdio: ["pipe", "inherit", "inherit"],
      env: { ...process.env, LESS: process.env.LESS ?? "FRX" },
    });
  } catch {
    return direct;
  }
  let closed = false;
  const exited = once(child, "exit").catch(() => undefined);
  child.on("error", () => {
    closed = true;
  });
  child.stdin!.on("error", () => {
    // The reader quit (EPIPE): what is left is not wanted.
    closed = true;
  });
  child.stdin!.on("close", () => {
    closed = true;
  });
  return {
    stream: child.stdin!,
    closed: () => closed,
    async done() {
      if (!closed) child.stdin!.end();
      await exited;
    },
  };
}
