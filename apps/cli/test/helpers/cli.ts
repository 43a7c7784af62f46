import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));

/** The BUILT command-line tool (the root `test` script builds first). */
export const CLI_MAIN = resolve(here, "../../dist/main.js");
export const DEMO_MAIN = resolve(here, "../../dist/demo.js");
/** The reference's sample file: read-only, always copied before use. */
export const SAMPLE_DB = resolve(
  here,
  "../../../../packages/store/test/fixtures/reference/hermes-v11-sample.db",
);

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A temporary directory removed after the test. */
export function tempDir(prefix = "hermes-cli-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A private copy of the sample database; returns its path. */
export function copyOfSample(): string {
  const path = join(tempDir(), "state.db");
  cpSync(SAMPLE_DB, path);
  chmodSync(path, 0o600);
  return path;
}

/** SHA-256 of a file's bytes (and of its -wal, if any). */
export function fingerprint(path: string): string {
  const h = createHash("sha256").update(readFileSync(path));
  if (existsSync(`${path}-wal`)) h.update(readFileSync(`${path}-wal`));
  return h.digest("hex");
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI as a child process. HERMES_HOME points at a fresh temp directory unless
 * given, so no test ever reaches ~/.hermes; TZ is UTC so times are stable; colour is off.
 */
export function cli(args: string[], o: { env?: Record<string, string>; input?: string } = {}): CliResult {
  const env: Record<string, string | undefined> = {
    ...process.env,
    TZ: "UTC",
    HERMES_HOME: tempDir("hermes-cli-home-"),
    NO_COLOR: undefined,
    FORCE_COLOR: undefined,
    ...o.env,
  };
  const r = spawnSync(process.execPath, [CLI_MAIN, ...args], {
    env: env as NodeJS.ProcessEnv,
    input: o.input ?? "",
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs the CLI on `db` (`--db` first). */
export function cliOn(db: string, args: string[], o: { env?: Record<string, string>; input?: string } = {}) {
  return cli(["--db", db, ...args], o);
}

/**
 * Runs the CLI inside a pseudo-terminal (util-linux `script`), so stdout is a TTY; returns
 * what the terminal received (with `\r\n` line ends).
 */
export function cliInPty(
  args: string[],
  input = "",
  env: Record<string, string> = {},
  size?: { columns: number; rows?: number },
): CliResult {
  const quote = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;
  const run = [process.execPath, CLI_MAIN, ...args].map(quote).join(" ");
  // The terminal's size, as a user's window would have it (`script` starts with 0x0).
  const command = size === undefined ? run : `stty cols ${size.columns} rows ${size.rows ?? 40}; exec ${run}`;
  const r = spawnSync("script", ["-qec", command, "/dev/null"], {
    input,
    env: {
      ...process.env,
      TZ: "UTC",
      TERM: "xterm-256color",
      // Rendering tests read the terminal directly; the pager test sets its own.
      PAGER: "cat",
      NO_COLOR: undefined,
      FORCE_COLOR: undefined,
      ...env,
    } as NodeJS.ProcessEnv,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** One line of stderr, as every CLI error must be. */
export function oneErrorLine(r: CliResult): string {
  const lines = r.stderr.split("\n").filter((l) => l !== "");
  if (lines.length !== 1) throw new Error(`expected one stderr line, got ${lines.length}: ${r.stderr}`);
  return lines[0]!;
}
