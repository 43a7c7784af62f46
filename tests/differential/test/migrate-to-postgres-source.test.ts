import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";
import { copyOfSample } from "./helpers/reference-sample.js";

const run = promisify(execFile);
const url = inject("pgConnectionString");
if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);
const manifest = createRequire(import.meta.url).resolve("@hermes/cli/package.json");
const CLI = join(
  dirname(manifest),
  (JSON.parse(readFileSync(manifest, "utf8")) as { bin: Record<string, string> }).bin["hermes-sessions"]!,
);
const pgUrl = (schema: string) => `${url}${url.includes("?") ? "&" : "?"}schema=${schema}`;

/** What a reader could change: the file's mode and bytes, and the listing of its folder. */
function stateOf(file: string) {
  return {
    mode: statSync(file).mode & 0o777,
    sha256: createHash("sha256").update(readFileSync(file)).digest("hex"),
    listing: readdirSync(dirname(file)).sort(),
  };
}

describe("migrate-to-postgres --from FILE", () => {
  it("reads its source read-only (mode, bytes, folder unchanged) and a rerun says all is already there", async () => {
    const file = copyOfSample();
    chmodSync(file, 0o644);
    const before = stateOf(file);
    expect(before).toMatchObject({ mode: 0o644, listing: ["state.db"] });
    const to = pgUrl(`m_${randomBytes(6).toString("hex")}`);
    const first = await run(process.execPath, [CLI, "migrate-to-postgres", "--from", file, "--to", to]);
    expect(first.stdout).toMatch(
      /^Copied .*state\.db to PostgreSQL: 13 sessions; 13 new \(109 messages\), 0 already there in [\d.]+ s/,
    );
    expect(stateOf(file)).toEqual(before);
    const again = await run(process.execPath, [CLI, "migrate-to-postgres", "--from", file, "--to", to]);
    expect(again.stdout).toMatch(/: 13 sessions; 0 new \(0 messages\), 13 already there in /);
    const json = JSON.parse(
      (await run(process.execPath, [CLI, "migrate-to-postgres", "--from", file, "--to", to, "--json"]))
        .stdout,
    );
    expect(json).toMatchObject({ sessions: 13, sessionsImported: 0, sessionsUnchanged: 13 });
    expect(json.sessionsSkipped).toBeGreaterThan(0);
    expect(stateOf(file)).toEqual(before);
  });
});
