import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HermesStoreError, openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { mountTmpfs, remountReadOnly, tmpfsUnavailable } from "./helpers/tmpfs.js";

const why = tmpfsUnavailable();
if (why !== null) console.warn(`[skipped] disk-full and read-only tests: ${why}`);

describe.skipIf(why !== null)("a full disk", () => {
  it("fails with STORE_FULL, loses nothing committed, and writes resume once space is freed", async () => {
    const dir = mountTmpfs("3m");
    const path = join(dir, "state.db");
    const filler = join(dir, "filler.bin");
    const store = await openSessionStore({ path, writeDeadlineMs: 2_000 });
    await store.createSession({ id: "s", source: "cli" });
    writeFileSync(filler, Buffer.alloc(1024 * 1024));
    let committed = 0;
    let failure: unknown;
    for (let i = 0; i < 10_000 && failure === undefined; i++) {
      try {
        await store.appendMessage({
          sessionId: "s",
          role: "user",
          content: `message ${i} ${"y".repeat(2000)}`,
        });
        committed++;
      } catch (error) {
        failure = error;
      }
    }
    expect(failure).toBeInstanceOf(HermesStoreError);
    expect((failure as HermesStoreError).code).toBe("STORE_FULL");
    expect(committed).toBeGreaterThan(10);
    expect(await store.messageCount({ sessionId: "s" })).toBe(committed);

    rmSync(filler);
    await store.appendMessage({ sessionId: "s", role: "user", content: "after space was freed" });
    expect(await store.messageCount({ sessionId: "s" })).toBe(committed + 1);
    expect((await store.getSession("s"))?.message_count).toBe(committed + 1);
    await store.close();

    const db = new Database(path, { readonly: true });
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    db.close();
  });
});

describe.skipIf(why !== null)("a read-only file system", () => {
  it("a writable open of an existing database there fails with a clear typed error", async () => {
    const dir = mountTmpfs("4m");
    const path = join(dir, "state.db");
    const store = await openSessionStore({ path });
    await store.createSession({ id: "s", source: "cli" });
    await store.close();
    remountReadOnly(dir);
    let error: unknown;
    try {
      const again = await openSessionStore({ path, readOnly: false });
      await again.close();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HermesStoreError);
    expect(["STORE_READ_ONLY"]).toContain((error as HermesStoreError).code);
    expect((error as Error).message).toContain(path);
  });

  it("a default open of an existing database there reads it, and says why writes are refused", async () => {
    const dir = mountTmpfs("4m");
    const path = join(dir, "state.db");
    const store = await openSessionStore({ path });
    await store.createSession({ id: "s", source: "cli" });
    await store.appendMessage({ sessionId: "s", role: "user", content: "kept on a read-only mount" });
    await store.close();
    remountReadOnly(dir);
    const again = await openSessionStore({ path });
    try {
      expect(again.readOnly).toBe(true);
      expect(again.readOnlyReason).toContain("read-only file system");
      expect((await again.getMessages("s")).map((m) => m.content)).toEqual(["kept on a read-only mount"]);
      expect((await again.searchMessages("mount")).map((h) => h.session_id)).toEqual(["s"]);
      const refused = await again
        .appendMessage({ sessionId: "s", role: "user", content: "x" })
        .catch((e) => e);
      expect(refused).toBeInstanceOf(HermesStoreError);
      expect((refused as HermesStoreError).code).toBe("STORE_READ_ONLY");
      expect((refused as Error).message).toContain(path);
    } finally {
      await again.close();
    }
  });

  it("creating a new database there fails with a clear typed error", async () => {
    const dir = mountTmpfs("1m");
    remountReadOnly(dir);
    let error: unknown;
    try {
      await openSessionStore({ path: join(dir, "state.db") });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HermesStoreError);
    expect((error as HermesStoreError).code).toBe("STORE_READ_ONLY");
  });
});
