import { createHash } from "node:crypto";
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));

const FIXTURES = resolve(here, "../../../../packages/store/test/fixtures/reference");
/** The reference's sample file: read-only, always copied before use. */
export const SAMPLE_DB = join(FIXTURES, "hermes-v11-sample.db");
/** A file written by a current agent (schema 30; see the fixtures' UPSTREAM notes). */
export const V30_SAMPLE_DB = join(FIXTURES, "hermes-v30-sample.db");

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A temporary directory removed after the test. */
export function tempDir(prefix = "hermes-web-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A private copy of the sample database (or of `from`); returns its path. */
export function copyOfSample(from = SAMPLE_DB, mode = 0o600): string {
  const path = join(tempDir(), "state.db");
  cpSync(from, path);
  chmodSync(path, mode);
  return path;
}

/** What serving must leave as it was: the file's bytes and mode, and its folder's listing. */
export function fileState(path: string): { sha256: string; mode: number; folder: string[] } {
  return {
    sha256: createHash("sha256").update(readFileSync(path)).digest("hex"),
    mode: statSync(path).mode & 0o777,
    folder: readdirSync(dirname(path)).sort(),
  };
}
