import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  type HermesStoreError,
  openReadOnlyDatabase,
  openSessionStore,
  StoreReadOnlyError,
} from "@hermes/store";
import { describe, expect, it } from "vitest";
import { fileState } from "./helpers/file-state.js";
import { copyOfFixture, SAMPLE_DB, tempDir } from "./helpers/temp-dir.js";

const TG = "20260102_120000_tg0001";
const CLI001 = "20260101_090000_cli001";

describe("openSessionStore({ readOnly: true }) on the reference's sample (WAL, no -wal beside it)", () => {
  it("every read works, and the file's bytes, mode and folder stay as they were", async () => {
    // 0644 on purpose: a writable open tightens it to 0600, a read-only one must not.
    const path = copyOfFixture(SAMPLE_DB, 0o644);
    const before = fileState(path);
    const store = await openSessionStore({ path, readOnly: true });
    try {
      expect(store.access).toMatchObject({
        mode: "read-only",
        readOnlyAccess: "snapshot",
        schemaVersion: 11,
        journalMode: "wal",
      });
      expect(await store.sessionCount()).toBe(13);
      expect(await store.messageCount()).toBe(109);
      expect((await store.listSessionsRich()).map((r) => r.id)).toContain(TG);
      expect((await store.searchSessions({ limit: 100 })).length).toBe(13);
      expect((await store.getMessages(CLI001)).length).toBeGreaterThan(0);
      expect((await store.getMessagesAsConversation(CLI001)).length).toBeGreaterThan(0);
      expect((await store.searchMessages("docker")).length).toBeGreaterThan(0);
      // 1–2 CJK characters without the store's short-CJK index: a scan, nothing built.
      expect((await store.searchMessages("桂林")).map((h) => h.session_id)).toEqual([TG]);
      expect((await store.exportAll()).length).toBe(13);
      let streamed = 0;
      for await (const s of store.exportStream()) streamed += s.messages.length;
      expect(streamed).toBe(109);
      expect(await store.exportSessionMarkdown(TG)).toContain("记忆断裂");
      expect((await store.verifySearchIndex()).ok).toBe(true);
      expect((await store.usageStats({ groupBy: "source" })).length).toBeGreaterThan(0);
      const error = await store.createSession({ id: "x", source: "cli" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreReadOnlyError);
      expect((error as HermesStoreError).code).toBe("STORE_READ_ONLY");
      expect((error as Error).message).toContain("readOnly: true");
    } finally {
      await store.close();
    }
    expect(fileState(path)).toEqual(before);
    expect(statSync(path).mode & 0o777).toBe(0o644);
  });

  it("a path string opens the same file", async () => {
    const path = copyOfFixture(SAMPLE_DB, 0o600);
    const store = await openSessionStore(path);
    try {
      expect(store.path).toBe(path);
      expect(store.readOnly).toBe(false);
      expect(await store.sessionCount()).toBe(13);
    } finally {
      await store.close();
    }
  });

  it("a missing file is refused, and nothing is created", async () => {
    const dir = join(tempDir(), "not-there");
    const error = await openSessionStore({ path: join(dir, "state.db"), readOnly: true }).catch(
      (e: unknown) => e,
    );
    expect((error as HermesStoreError).code).toBe("STORE_READ_ONLY");
    expect(existsSync(dir)).toBe(false);
  });

  it("follows a writer: a live one through a shared connection, a later one by reading again", async () => {
    const path = copyOfFixture(SAMPLE_DB, 0o600);
    const reader = await openSessionStore({ path, readOnly: true });
    try {
      expect(reader.access.readOnlyAccess).toBe("snapshot");
      const writer = await openSessionStore({ path });
      await writer.appendMessage({ sessionId: TG, role: "user", content: "written after the reader opened" });
      // The writer's -wal appeared: the next read leaves the snapshot for a shared connection.
      expect((await reader.getMessages(TG)).at(-1)?.content).toBe("written after the reader opened");
      expect(reader.access.readOnlyAccess).toBe("shared");
      await writer.appendMessage({ sessionId: TG, role: "assistant", content: "and another one" });
      expect((await reader.getMessages(TG)).at(-1)?.content).toBe("and another one");
      expect((await reader.searchMessages("another")).map((h) => h.session_id)).toEqual([TG]);
      await writer.close();
    } finally {
      await reader.close();
    }
  });

  it("uses the short-CJK index a writable store built, when it is caught up", async () => {
    const path = copyOfFixture(SAMPLE_DB, 0o600);
    const writer = await openSessionStore({ path });
    expect((await writer.searchMessages("桂林")).map((h) => h.session_id)).toEqual([TG]);
    await writer.close();
    const before = fileState(path);
    const store = await openSessionStore({ path, readOnly: true });
    try {
      expect((await store.searchMessages("桂林")).map((h) => h.session_id)).toEqual([TG]);
      expect((await store.verifySearchIndex()).indexes.find((i) => i.kind === "short-cjk")?.status).toBe(
        "ok",
      );
    } finally {
      await store.close();
    }
    expect(fileState(path)).toEqual(before);
  });
});

describe("openReadOnlyDatabase", () => {
  it("reads the file as it is and leaves no trace", () => {
    const path = copyOfFixture(SAMPLE_DB, 0o644);
    const before = fileState(path);
    const file = openReadOnlyDatabase(path);
    try {
      expect(file.profile.schemaVersion).toBe(11);
      expect(file.profile.plain).toBe(true);
      expect(file.db.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(() => file.db.exec("DELETE FROM messages")).toThrow(/readonly/);
    } finally {
      file.close();
    }
    expect(fileState(path)).toEqual(before);
  });
});
