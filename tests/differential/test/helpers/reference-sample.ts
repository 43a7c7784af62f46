import { chmodSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTestFinished } from "vitest";

/** The reference's sample `state.db` (schema v11), kept with the SQLite store's fixtures. */
const SAMPLE_DB = new URL(
  "../../../../packages/store/test/fixtures/reference/hermes-v11-sample.db",
  import.meta.url,
);

/** A writable copy of the sample in a directory of its own, removed when the test ends. */
export function copyOfSample(): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-differential-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "state.db");
  copyFileSync(SAMPLE_DB, file);
  chmodSync(file, 0o600);
  return file;
}
