import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startChild } from "./helpers/child-process.js";
import { tempDir } from "./helpers/temp-dir.js";

// Thread priorities are per thread on Linux only (elsewhere the store leaves them alone).
describe.runIf(process.platform === "linux")("background threads' priority", () => {
  it("read workers and the side-index builder run at nice 10, the caller's thread keeps its own", async () => {
    const child = startChild("thread-priorities.mjs", [join(tempDir("hermes-nice-"), "state.db")]);
    const { code, stderr } = await child.exited;
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    const r = child.result<{ building: boolean; main: number; newThreads: number[]; afterClose: number[] }>();
    expect(r.building).toBe(true);
    expect(r.main).toBe(0);
    // 2 read workers and the builder; other new threads (libuv's pool) keep the process's nice.
    expect(r.newThreads.filter((n) => n === 10)).toHaveLength(3);
    expect(r.newThreads.filter((n) => n !== 10 && n !== 0)).toEqual([]);
    expect(r.afterClose.filter((n) => n === 10)).toEqual([]);
  }, 60_000);
});
