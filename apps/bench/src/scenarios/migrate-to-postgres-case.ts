import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { CaseResult } from "../scenario.js";

/** The CLI of this checkout (the bench runs it as a user would). */
const CLI = fileURLToPath(new URL("../../../cli/dist/main.js", import.meta.url));

/** Peak resident set of a running process in MB (Linux `VmHWM`), or 0 when unknown. */
function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Math.round(Number(m[1]) / 102.4) / 10 : 0;
  } catch {
    return 0;
  }
}

/**
 * `hermes-sessions migrate-to-postgres` of `file` into a fresh schema of the server at `url`
 * (dropped afterwards): wall time, messages per second (the CLI's own summary) and the CLI
 * process's peak RSS (its high-water mark, read while it runs).
 */
export async function migrateToPostgresCase(
  url: string,
  file: string,
  log: (message: string) => void,
): Promise<CaseResult> {
  const name = "migrate-to-postgres (CLI)";
  if (!existsSync(CLI))
    return {
      name,
      status: "unavailable",
      note: `${CLI} not built`,
      store: null,
      baseline: null,
      ratio: null,
    };
  const schema = `bench_migrate_${process.pid}`;
  const target = `${url}${url.includes("?") ? "&" : "?"}schema=${schema}`;
  log(`migrate-to-postgres of ${file} into schema ${schema}`);
  const child = spawn(
    process.execPath,
    [CLI, "migrate-to-postgres", "--from", file, "--to", target, "--json"],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let out = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  let peak = 0;
  const poll = setInterval(() => {
    peak = Math.max(peak, peakRssMb(child.pid ?? 0));
  }, 200);
  const t0 = performance.now();
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  clearInterval(poll);
  const wallMs = performance.now() - t0;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
  if (code !== 0)
    return {
      name,
      status: "error",
      note: `the CLI exited with ${code}`,
      store: null,
      baseline: null,
      ratio: null,
    };
  const summary = JSON.parse(out) as {
    messagesImported: number;
    sessions: number;
    messagesPerSecond: number;
    elapsedMs: number;
  };
  return {
    name,
    status: "ok",
    store: null,
    baseline: null,
    ratio: null,
    extra: {
      sessions: summary.sessions,
      messages: summary.messagesImported,
      messagesPerSecond: summary.messagesPerSecond,
      copySeconds: Math.round(summary.elapsedMs / 100) / 10,
      wallSeconds: Math.round(wallMs / 100) / 10,
      peakRssMb: peak,
    },
  };
}
