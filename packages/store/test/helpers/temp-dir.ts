import { chmodSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The reference's fixtures, copied from `shared/fixtures` into the repository so that a fresh
 * clone runs every test (read-only: always copy before opening).
 */
export const FIXTURES_DIR = resolve(here, "../fixtures/reference");
export const SAMPLE_DB = join(FIXTURES_DIR, "hermes-v11-sample.db");
export const REFERENCE_SCHEMA_SQL = join(FIXTURES_DIR, "hermes-v11-schema.sql");
/** A file written by upstream Hermes Agent at schema v30 (see the fixtures' README). */
export const V30_SAMPLE_DB = join(FIXTURES_DIR, "hermes-v30-sample.db");
/** The v30 sample upgraded to schema v31 (uids, auto-archive; see the fixtures' README). */
export const V31_SAMPLE_DB = join(FIXTURES_DIR, "hermes-v31-sample.db");

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the test. */
export function tempDir(prefix = "hermes-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A writable copy of the reference's sample database; returns its path. */
export function copyOfSample(): string {
  const path = join(tempDir(), "state.db");
  cpSync(SAMPLE_DB, path);
  chmodSync(path, 0o600);
  return path;
}

/** A copy of a fixture as `state.db` in a fresh directory, with file mode `mode`; returns its path. */
export function copyOfFixture(fixture: string, mode = 0o644): string {
  const path = join(tempDir(), "state.db");
  cpSync(fixture, path);
  chmodSync(path, mode);
  return path;
}
