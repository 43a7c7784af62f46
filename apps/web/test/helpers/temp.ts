import { chmodSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));

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
export function tempDir(prefix = "hermes-web-test-"): string {
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
