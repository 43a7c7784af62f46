import { readFileSync } from "node:fs";

/**
 * This process's own peak resident set in MB: `VmHWM` of /proc/self/status on Linux. Not
 * `process.resourceUsage().maxRSS`: on Linux a forked child's maxRSS starts at its parent's
 * peak (it survives fork and exec), so every scenario process read the bench parent's size.
 */
export function peakRssMb(): number {
  try {
    const kb = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    if (kb !== undefined) return Math.round((Number(kb) / 1024) * 10) / 10;
  } catch {
    // not Linux: fall back below
  }
  return Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;
}
