import { join } from "node:path";
import { BackendError, HermesStoreError, openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
// Internals (not part of the public surface): built code, as in the other white-box tests.
import { DatabaseConnection } from "../dist/database-connection.js";
import { mapSqliteError } from "../dist/sqlite-errors.js";
import { DEFAULT_WRITE_POLICY } from "../dist/write/write-policy.js";
import { WriteQueue } from "../dist/write/write-queue.js";
import { tempDir } from "./helpers/temp-dir.js";

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function open(): Promise<SessionStore> {
  const store = await openSessionStore({ path: join(tempDir(), "state.db") });
  opened.push(store);
  return store;
}

// Every figure the SQLite store reported before `backend` was added to stats().
const SQLITE_FIGURES = [
  "writes",
  "failedWrites",
  "groupsCommitted",
  "writesPerGroupMean",
  "writesPerGroupMax",
  "attempts",
  "retries",
  "busyErrors",
  "waitedMs",
  "busyTimeouts",
  "checkpoints",
  "walRestarts",
  "walEscalations",
  "walBytesMax",
  "handoffs",
  "deferrals",
  "sharedWrites",
  "servedWrites",
  "walBytes",
];

describe("the SQLite store's backend shapes", () => {
  it("backend is { kind: 'sqlite', path, sqliteVersion }, frozen, the file and the linked SQLite", async () => {
    const store = await open();
    const linked = new Database(":memory:");
    const version = String(linked.prepare("SELECT sqlite_version()").pluck().get());
    linked.close();
    expect(store.backend).toEqual({ kind: "sqlite", path: store.path, sqliteVersion: version });
    expect(Object.isFrozen(store.backend)).toBe(true);
  });

  it("stats() is tagged backend: 'sqlite' and keeps every figure, WAL included", async () => {
    const store = await open();
    await store.createSession({ id: "s1", source: "cli" });
    await store.appendMessage({ sessionId: "s1", role: "user", content: "hi" });
    const stats = store.stats();
    expect(stats.backend).toBe(store.backend.kind);
    expect(Object.keys(stats).sort()).toEqual(["backend", "sideIndexes", ...SQLITE_FIGURES].sort());
    for (const key of SQLITE_FIGURES) expect(typeof stats[key as keyof typeof stats], key).toBe("number");
    // A fresh file has no short-CJK index yet (built on the first short CJK search).
    expect(stats.sideIndexes).toEqual({
      cjk: {
        state: "absent",
        active: false,
        indexedRows: 0,
        totalRows: 1,
        pendingChanges: 0,
        lastError: null,
      },
    });
    expect(stats).toMatchObject({ writes: 2, failedWrites: 0 });
    expect(stats.walBytes).toBeGreaterThan(0);
  });
});

describe("BACKEND_ERROR", () => {
  it("a file SQLite cannot open, in a writable directory, is a BackendError with SQLite's code and error", () => {
    const driverError = Object.assign(new Error("unable to open database file"), { code: "SQLITE_CANTOPEN" });
    const mapped = mapSqliteError(driverError, join(tempDir(), "state.db"));
    expect(mapped).toBeInstanceOf(BackendError);
    expect(mapped).toBeInstanceOf(HermesStoreError);
    expect(mapped).toMatchObject({
      code: "BACKEND_ERROR",
      backendCode: "SQLITE_CANTOPEN",
      cause: driverError,
    });
    expect((mapped as Error).message).toContain("unable to open database file");
  });

  it("a write unit that returns a promise is refused with BACKEND_ERROR, and nothing of it is kept", async () => {
    const conn = new DatabaseConnection(join(tempDir("hermes-queue-"), "q.db"), {
      busyTimeoutMs: 5,
      synchronous: "FULL",
      journalSizeLimit: 1 << 20,
      readOnly: false,
    });
    conn.exec("CREATE TABLE t (v TEXT)");
    const writes = new WriteQueue(conn, DEFAULT_WRITE_POLICY);
    await expect(
      writes.run("async", () => {
        conn.exec("INSERT INTO t VALUES ('x')");
        return Promise.resolve();
      }),
    ).rejects.toMatchObject({ name: "BackendError", code: "BACKEND_ERROR", backendCode: undefined });
    expect(conn.all("SELECT v FROM t")).toEqual([]);
    conn.close();
  });
});
