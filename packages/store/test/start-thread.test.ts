import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type ThreadEntry, threadEntryUrl } from "../dist/threads/start-thread.js";

const ENTRIES: ThreadEntry[] = ["read-worker", "writer-worker", "cjk-build-worker"];

describe("thread entries", () => {
  it.each(ENTRIES)("%s starts from the bundle the build wrote", (entry) => {
    const url = threadEntryUrl(entry);
    expect(url.pathname.endsWith(`/dist/threads/${entry}.bundle.js`)).toBe(true);
    expect(existsSync(fileURLToPath(url))).toBe(true);
  });
});
