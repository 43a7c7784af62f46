import { existsSync, readFileSync } from "node:fs";

/** Threads of this process (Linux), or `null` where /proc is not there. */
export function threadCount(): number | null {
  if (!existsSync("/proc/self/status")) return null;
  const m = /^Threads:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "utf8"));
  return m === null ? null : Number(m[1]);
}
