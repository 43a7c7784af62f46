import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BackendError, InvalidArgumentError, StoreClosedError } from "@hermes/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionStore } from "../dist/index.js";
import { ReadPool } from "../dist/read-pool/read-pool.js";

describe("read pool", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "hermes-pool-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads in workers see every write that resolved before the read was issued", async () => {
    const path = join(dir, "state.db");
    const store = await openSessionStore({ path });
    await store.createSession({ id: "s1", source: "cli" });
    const pool = new ReadPool(path, 2);
    try {
      for (let i = 0; i < 20; i++) {
        await store.appendMessage({ sessionId: "s1", role: "user", content: `m${i}` });
        expect(await pool.call<number>("messageCount", [{ sessionId: "s1" }])).toBe(i + 1);
      }
      const rows = await pool.call<Array<{ content: string }>>("getMessages", ["s1"]);
      expect(rows.map((r) => r.content)).toEqual(
        await store.getMessages("s1").then((m) => m.map((r) => r.content)),
      );
    } finally {
      await pool.close();
      await store.close();
    }
  });

  it("a killed worker rejects only its own calls and is replaced; close rejects with STORE_CLOSED", async () => {
    const path = join(dir, "state.db");
    const store = await openSessionStore({ path });
    await store.createSession({ id: "s1", source: "cli" });
    const pool = new ReadPool(path, 2);
    try {
      // Killed at once: worker 0 is still loading its modules and opening the file, so its
      // call is certainly in flight (a warm worker could answer before the kill lands).
      const doomed = pool.call("getSession", ["s1"]); // worker 0
      const other = pool.call("getSession", ["s1"]); // worker 1
      await pool.workerAt(0)?.terminate();
      await expect(doomed).rejects.toBeInstanceOf(BackendError);
      expect(await other).toMatchObject({ id: "s1" });
      expect(await pool.call("sessionCount", [])).toBe(1);
      expect(await pool.call("sessionCount", [])).toBe(1);
      // A typed error raised in the worker arrives as core's class with its code.
      const refused = pool.call("listSessionsRich", [{ limit: -1 }]);
      await expect(refused).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(refused).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    } finally {
      await pool.close();
      await store.close();
    }
    await expect(pool.call("sessionCount", [])).rejects.toBeInstanceOf(StoreClosedError);
  });
});
