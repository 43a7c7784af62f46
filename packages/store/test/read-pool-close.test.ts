import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startChild } from "./helpers/child-process.js";
import { tempDir } from "./helpers/temp-dir.js";

describe("read pool: close", () => {
  it.each([
    { how: "warm-up", readyAtOpen: 0, writer: "inline" },
    { how: "warm-open", readyAtOpen: 2, writer: "inline" },
    { how: "warm-up", readyAtOpen: 0, writer: "thread" },
  ])(
    "close ends every worker and leaves no thread or handle: the process exits by itself ($how, writer: $writer)",
    async ({ how, readyAtOpen, writer }) => {
      const child = startChild("pool-reader.mjs", [join(tempDir("hermes-pool-"), "state.db"), how, writer]);
      // A worker left running would keep the child alive: it is killed after 30 s and fails here.
      const timer = setTimeout(() => child.process.kill("SIGKILL"), 30_000);
      const { code, signal, stderr } = await child.exited;
      clearTimeout(timer);
      expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
      const result = child.result<{
        readyAtOpen: number;
        hits: number;
        streamed: number;
        served: number;
        started: boolean[];
        endedAfterClose: boolean[];
        writerEnded: boolean | null;
        resources: string[];
      }>();
      // warmReaders: both workers were ready when the open resolved, before any read.
      expect(result.readyAtOpen).toBe(readyAtOpen);
      expect(result.started).toEqual([true, true]);
      expect(result.endedAfterClose).toEqual([true, true]);
      // The writer thread, when the store had one, ended with the store.
      expect(result.writerEnded).toBe(writer === "thread" ? true : null);
      expect(result.hits).toBe(3);
      expect(result.streamed).toBe(3);
      // The search, the stream's opening and its batch were answered by workers.
      expect(result.served).toBeGreaterThanOrEqual(3);
      expect(result.resources.filter((r) => /Worker|MessagePort/.test(r))).toEqual([]);
    },
    60_000,
  );
});
