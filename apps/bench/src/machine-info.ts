import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import * as os from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { sqliteVersion } from "./raw-connection.js";

/** Where and when the figures were measured. */
export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGb: number;
  platform: string;
  node: string;
  sqlite: string;
  betterSqlite3: string;
  /** 1-minute load average when the run started: other work on the machine skews timings. */
  loadAverage: number;
  gitCommit: string | null;
  date: string;
}

/** Collects the machine description recorded with every result. */
export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  let gitCommit: string | null = null;
  try {
    gitCommit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      cwd: dirname(fileURLToPath(import.meta.url)),
    }).trim();
  } catch {
    gitCommit = null;
  }
  const require = createRequire(import.meta.url);
  const bs3 = (require("better-sqlite3/package.json") as { version: string }).version;
  return {
    cpuModel: cpus[0]?.model.trim() ?? "unknown",
    cores: cpus.length,
    memoryGb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    sqlite: sqliteVersion(),
    betterSqlite3: bs3,
    loadAverage: Math.round(os.loadavg()[0]! * 100) / 100,
    gitCommit,
    date: new Date().toISOString(),
  };
}
