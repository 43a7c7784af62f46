import { describe, expect, it } from "vitest";
import { ReadOnlyFile } from "../dist/read-only-file.js";
import { copyOfFixture, V30_SAMPLE_DB } from "./helpers/temp-dir.js";

// A read-only open keeps SQLite's temporary storage in memory (it creates no file anywhere);
// the read workers of a writable store let sorts use temporary files (SQLite's default), which
// ranked FTS5 queries run faster with. Either way the newer layout's views are in place.
describe("temporary storage of a read-only file's connection", () => {
  it.each([
    [undefined, 2],
    [false, 2],
    [true, 0],
  ])("tempFiles: %s gives temp_store %i, with the file's views installed", (tempFiles, expected) => {
    const path = copyOfFixture(V30_SAMPLE_DB);
    const file = ReadOnlyFile.open(path, {
      busyTimeoutMs: 1_000,
      snapshotMaxBytes: 0, // a shared connection, as the pool's workers have
      views: true,
      ...(tempFiles === undefined ? {} : { tempFiles }),
    });
    try {
      expect(file.db.pragma("temp_store", { simple: true })).toBe(expected);
      const views = file.db
        .prepare("SELECT count(*) AS n FROM temp.sqlite_master WHERE type = 'view'")
        .get() as {
        n: number;
      };
      expect(views.n).toBeGreaterThan(0);
    } finally {
      file.close();
    }
  });
});
