import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A throwaway PostgreSQL cluster (see {@link startPgCluster}). */
export interface PgCluster {
  readonly connectionString: string;
  /** Stops the server and deletes its directory (a kept `dir` stays, see {@link PgClusterOptions}). */
  stop(): void;
}

/** Directory of the PostgreSQL server binaries (`initdb`, `pg_ctl`), or `null`. */
export function findPgBin(): string | null {
  if (process.env.HERMES_PG_BIN && existsSync(join(process.env.HERMES_PG_BIN, "initdb"))) {
    return process.env.HERMES_PG_BIN;
  }
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : join(root, versions[0], "bin");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Whether a kept cluster (`startPgCluster({ dir })`) can live under `parent`: as root the
 * server runs as `postgres`, which must be able to reach it (a 0700 temp directory of root's
 * is out of its reach).
 */
export function canHostPgCluster(parent: string): boolean {
  if (process.getuid?.() !== 0) return true;
  return spawnSync("runuser", ["-u", "postgres", "--", "test", "-x", parent]).status === 0;
}

/** Options of {@link startPgCluster}. */
export interface PgClusterOptions {
  /**
   * Keep PostgreSQL's durability settings (`fsync` on, the default for benchmarks that compare
   * with a durable SQLite). Default `false`: `fsync=off`, faster for tests of a throwaway server.
   */
  durable?: boolean;
  /**
   * Keep the cluster in this directory instead of a temp one: an existing cluster there is
   * started as it is (its databases kept), a missing one is created, and `stop()` leaves the
   * directory in place. For benchmarks that load a large data set once and reuse it.
   */
  dir?: string;
  /** Extra server settings (`-c name=value`), e.g. `{ shared_buffers: "1GB" }`. */
  settings?: Readonly<Record<string, string>>;
}

/**
 * A throwaway PostgreSQL server for tests and benchmarks (no Docker): `initdb` into a temp
 * directory and `pg_ctl start` on 127.0.0.1 and a private socket; `stop()` removes it all.
 * initdb refuses to run as root, so as root the server runs as the `postgres` user.
 */
export async function startPgCluster(o: PgClusterOptions = {}): Promise<PgCluster> {
  const bin = findPgBin();
  if (bin === null) throw new Error("PostgreSQL server binaries not found (install Debian's postgresql)");
  const asRoot = process.getuid?.() === 0;
  const kept = o.dir !== undefined;
  if (kept) mkdirSync(o.dir!, { recursive: true });
  const base = kept ? o.dir! : mkdtempSync(join(tmpdir(), "hermes-pg-"));
  const data = join(base, "data");
  const run = (cmd: string, args: string[]) => {
    const full = asRoot ? ["-u", "postgres", "--", join(bin, cmd), ...args] : args;
    const res = spawnSync(asRoot ? "runuser" : join(bin, cmd), full, { encoding: "utf8" });
    if (res.status !== 0) throw new Error(`${cmd} failed: ${res.stderr || res.stdout}`);
  };
  if (asRoot) {
    const pw = execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim();
    const gid = execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim();
    chownSync(base, Number(pw), Number(gid));
  }
  chmodSync(base, 0o700);
  const port = await freePort();
  if (!existsSync(join(data, "PG_VERSION"))) {
    rmSync(data, { recursive: true, force: true });
    run("initdb", [
      "-D",
      data,
      "-U",
      "postgres",
      "-A",
      "trust",
      "-E",
      "UTF8",
      "--locale=C.UTF-8",
      "--no-sync",
    ]);
  }
  if (kept && existsSync(join(data, "postmaster.pid"))) {
    // Left running by an interrupted run: stopped first, so it restarts on this run's port.
    try {
      run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
    } catch {
      // Not running (a stale pid file): pg_ctl start copes with that.
    }
  }
  const extra = Object.entries(o.settings ?? {})
    .map(([name, value]) => ` -c ${name}=${value}`)
    .join("");
  run("pg_ctl", [
    "-D",
    data,
    "-l",
    join(base, "server.log"),
    "-w",
    "-o",
    `-p ${port} -k ${base} -c listen_addresses=127.0.0.1${o.durable ? "" : " -c fsync=off"} -c max_connections=200${extra}`,
    "start",
  ]);
  return {
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        // A kept cluster shuts down cleanly (no crash recovery at the next start).
        run("pg_ctl", ["-D", data, "-m", kept ? "fast" : "immediate", "-w", "stop"]);
      } finally {
        if (!kept) rmSync(base, { recursive: true, force: true });
      }
    },
  };
}

/** What {@link providePgServer} hands to a test project's tests (vitest's `inject(key)`). */
export interface PgTestContext {
  /** Connection string of the server, or `""` when none could be started. */
  pgConnectionString: string;
  /** Why there is no server (`""` when there is one). */
  pgUnavailable: string;
}

/**
 * A vitest global setup (`export default providePgServer`) for tests that need a server:
 * `HERMES_PG_URL` when set, else a throwaway cluster ({@link startPgCluster}) for the whole
 * project, stopped by the returned teardown. Without server binaries the tests get
 * `pgConnectionString: ""` and the reason in `pgUnavailable`.
 */
export async function providePgServer(project: {
  provide(key: keyof PgTestContext, value: string): void;
}): Promise<() => void> {
  let cluster: PgCluster | undefined;
  let context: PgTestContext;
  if (process.env.HERMES_PG_URL) {
    context = { pgConnectionString: process.env.HERMES_PG_URL, pgUnavailable: "" };
  } else if (findPgBin() === null) {
    context = {
      pgConnectionString: "",
      pgUnavailable: "PostgreSQL server binaries not found; .ci/run installs them",
    };
  } else {
    cluster = await startPgCluster();
    context = { pgConnectionString: cluster.connectionString, pgUnavailable: "" };
  }
  project.provide("pgConnectionString", context.pgConnectionString);
  project.provide("pgUnavailable", context.pgUnavailable);
  return () => cluster?.stop();
}
