import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { findPgBin } from "@hermes/postgres/testing";
import { afterEach, describe, expect, inject, it } from "vitest";
import { copyOfSample } from "./helpers/reference-sample.js";

// Issue #43: the postgres README's walk-through (a role and a database, migrate, use, back to a
// file) run as written, `serve` aside, against the tests' PostgreSQL server.

const url = inject("pgConnectionString");
if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);
const require = createRequire(import.meta.url);
const manifest = require.resolve("@hermes/cli/package.json");
const CLI = join(
  dirname(manifest),
  (JSON.parse(readFileSync(manifest, "utf8")) as { bin: Record<string, string> }).bin["hermes-sessions"]!,
);
const README = readFileSync(
  join(dirname(require.resolve("@hermes/postgres/package.json")), "README.md"),
  "utf8",
);

/** The walk-through's shell block. */
function walkthrough(): string {
  const start = README.indexOf("### From a state.db to a server, step by step");
  const block = /```sh\n([\s\S]*?)```/.exec(README.slice(start))?.[1];
  if (start < 0 || block === undefined) throw new Error("the README has no walk-through");
  return block;
}

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("packages/postgres/README.md: from a state.db to a server, step by step", () => {
  it("runs as written: the role and database made, the file copied, read back, exported and imported", () => {
    const server = new URL(url);
    const home = mkdtempSync(join(tmpdir(), "hermes-walkthrough-"));
    made.push(home);
    mkdirSync(join(home, ".hermes"));
    copyFileSync(copyOfSample(), join(home, ".hermes", "state.db"));
    // `hermes-sessions` on the PATH, as `npm install -g` puts it; psql from the server's binaries.
    const bin = join(home, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "hermes-sessions"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(join(bin, "hermes-sessions"), 0o755);
    const env = {
      ...process.env,
      HOME: home,
      HERMES_HOME: join(home, ".hermes"),
      PATH: [bin, findPgBin(), process.env.PATH].join(":"),
      PGHOST: server.hostname,
      PGPORT: server.port || "5432",
      PGUSER: decodeURIComponent(server.username),
      PGPASSWORD: decodeURIComponent(server.password),
    };
    const script = walkthrough()
      .split("\n")
      .filter((line) => !/ serve\b/.test(line))
      .join("\n");
    expect(script).toContain("migrate-to-postgres");
    const psql = (sql: string) =>
      spawnSync("psql", ["-d", "postgres", "-c", sql], { env, cwd: home, encoding: "utf8" });
    try {
      const r = spawnSync("bash", ["-euo", "pipefail", "-c", script], {
        env,
        cwd: home,
        encoding: "utf8",
        timeout: 300_000,
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/Copied .*state\.db to PostgreSQL: 13 sessions; 13 new \(109 messages\)/);
      expect(r.stdout).toContain("Fix Docker Build");
      expect(r.stdout).toContain(">>>docker<<<");
      expect(r.stderr).toContain("Exported 13 sessions with 109 messages to backup.jsonl");
      expect(r.stdout).toMatch(/Imported 13 sessions with 109 messages/);
      const back = spawnSync("hermes-sessions", ["--db", "./state.db", "list", "--all", "--json"], {
        env,
        cwd: home,
        encoding: "utf8",
      });
      expect((JSON.parse(back.stdout) as unknown[]).length).toBe(13);
    } finally {
      psql("DROP DATABASE IF EXISTS hermes WITH (FORCE)");
      psql("DROP ROLE IF EXISTS hermes");
    }
  });
});
