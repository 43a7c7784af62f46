// Backups and restores of real files (backupTo, listBackups, verifyBackup, restoreFrom): the
// fixtures of every schema round-trip, the source is left as it was, a damaged archive is
// caught, rotation keeps N, and a restore is refused while another process holds the target.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import {
  ArchiveInvalidError,
  backupTo,
  listBackups,
  openSessionStore,
  restoreFrom,
  TargetInUseError,
  verifyBackup,
} from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { startChild } from "./helpers/child-process.js";
import { fileState } from "./helpers/file-state.js";
import { logicalContent } from "./helpers/logical-content.js";
import { copyOfFixture, SAMPLE_DB, tempDir, V30_SAMPLE_DB, V31_SAMPLE_DB } from "./helpers/temp-dir.js";

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe.each([
  ["v11", SAMPLE_DB, 11, 13, 109, 0, "wal"],
  ["v30", V30_SAMPLE_DB, 30, 15, 117, 1697639444, "delete"],
  ["v31", V31_SAMPLE_DB, 31, 15, 118, 1697639444, "delete"],
])(
  "backup and restore of the %s fixture",
  (_name, fixture, version, sessions, messages, applicationId, journalMode) => {
    it("restores a file whose logical content equals the source, and leaves the source as it was", async () => {
      const source = copyOfFixture(fixture, 0o600);
      const before = fileState(source);
      const dir = join(tempDir(), "backups");
      const { archive, manifest } = await backupTo(dir, { source });

      expect(fileState(source)).toEqual(before);
      expect(manifest).toMatchObject({
        schemaVersion: version,
        counts: { sessions, messages },
        source: { path: source, applicationId, journalMode },
        snapshot: { integrity: "ok" },
      });
      expect(manifest.snapshot.fts.map((f) => f.result)).toEqual(["ok", "ok"]);
      // The agent's generation stamp, where the file has one (v30 and later).
      expect(manifest.source.generation).toEqual(
        version >= 30 ? expect.stringMatching(/^[0-9a-f]{32}$/) : null,
      );
      expect(manifest.snapshot.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(mode(dir)).toBe("700");
      expect(mode(archive)).toBe("600");
      expect(readdirSync(dir).sort()).toEqual([
        archive.slice(dir.length + 1),
        archive.slice(dir.length + 1).replace(/\.db\.gz$/, ".manifest.json"),
      ]);

      const target = join(tempDir(), "restored", "state.db");
      const result = await restoreFrom(archive, { target });
      expect(result.previous).toBeNull();
      expect(readdirSync(join(target, ".."))).toEqual(["state.db"]);
      expect(mode(target)).toBe("600");
      expect(mode(join(target, ".."))).toBe("700");
      expect(logicalContent(target)).toEqual(logicalContent(source));
      // The header's journal mode (bytes 18/19) is the source's: a WAL file stays WAL, a
      // rollback-journal one stays rollback-journal, as the agent expects.
      expect([...readFileSync(target).subarray(18, 20)]).toEqual([...readFileSync(source).subarray(18, 20)]);
    });
  },
);

describe("backup of a live WAL file", () => {
  it("takes the commits still in the -wal, creates nothing beside the source, and the store opens the restored file", async () => {
    const source = copyOfFixture(SAMPLE_DB, 0o600);
    const store = await openSessionStore({ path: source });
    await store.createSession({ id: "fresh", source: "cli" });
    await store.appendMessage({
      sessionId: "fresh",
      role: "user",
      content: "written just before the backup",
    });
    const listing = readdirSync(join(source, "..")).sort();
    expect(listing).toContain("state.db-wal");
    const { archive, manifest } = await backupTo(join(tempDir(), "b"), { source });
    expect(readdirSync(join(source, "..")).sort()).toEqual(listing);
    expect(manifest.snapshot.method).toBe("online-backup");
    expect(manifest.counts.messages).toBe(110);
    await store.close();

    const target = join(tempDir(), "state.db");
    await restoreFrom(archive, { target });
    const restored = await openSessionStore({ path: target });
    try {
      expect((await restored.getMessages("fresh")).map((m) => m.content)).toEqual([
        "written just before the backup",
      ]);
      expect(await restored.messageCount()).toBe(110);
    } finally {
      await restored.close();
    }
  });
});

describe("restore over an existing file", () => {
  it("keeps the replaced file, with the commits of a stale -wal, as state.db.before-restore-<time>", async () => {
    const source = copyOfFixture(V30_SAMPLE_DB, 0o600);
    const { archive } = await backupTo(join(tempDir(), "b"), { source });
    const target = copyOfFixture(SAMPLE_DB, 0o600);
    // A WAL left by a process that ended without checkpointing: it belongs to the old file.
    const writer = new Database(target);
    writer.pragma("wal_autocheckpoint = 0");
    writer.prepare("INSERT INTO state_meta (key, value) VALUES ('left-in-wal', 'yes')").run();
    const oldContent = logicalContent(target);
    const wal = readFileSync(`${target}-wal`);
    writer.close(); // the last connection: SQLite checkpoints and deletes the -wal …
    writeFileSync(`${target}-wal`, wal); // … so put a stale one back, as a crash would leave it

    const result = await restoreFrom(archive, { target });
    expect(result.previous).toMatch(/state\.db\.before-restore-/);
    // Nobody held the stale -wal: SQLite folded it into the old file (or it moved with it),
    // and none is left to be replayed into the restored one.
    expect(existsSync(`${target}-wal`)).toBe(false);
    expect(logicalContent(target)).toEqual(logicalContent(V30_SAMPLE_DB));
    expect(logicalContent(result.previous as string)).toEqual(oldContent);
  });
});

describe("restore refused while the target is held", () => {
  it.each([
    ["a writer inside a transaction", "lock-holder.mjs", ["0", "hang"], "locked", SAMPLE_DB],
    ["an idle connection to a WAL file", "idle-holder.mjs", [], "open", SAMPLE_DB],
    ["an idle connection to a rollback-journal file", "idle-holder.mjs", [], "open", V30_SAMPLE_DB],
  ])("by %s, leaving the target untouched", async (_what, script, args, line, fixture) => {
    const { archive } = await backupTo(join(tempDir(), "b"), { source: copyOfFixture(V31_SAMPLE_DB, 0o600) });
    const target = copyOfFixture(fixture, 0o600);
    const holder = startChild(script, [target, ...args]);
    try {
      await holder.waitForLine(line);
      const before = fileState(target);
      const error = await restoreFrom(archive, { target }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TargetInUseError);
      expect((error as TargetInUseError).code).toBe("TARGET_IN_USE");
      expect((error as TargetInUseError).holders.map((h) => h.pid)).toContain(holder.process.pid);
      expect((error as Error).message).toMatch(/Stop the Hermes agent/);
      expect(fileState(target)).toEqual(before);
    } finally {
      holder.process.kill();
      await holder.exited;
    }
  });
});

describe("a damaged archive", () => {
  it("is reported by verifyBackup and refused by restoreFrom, the target untouched", async () => {
    const source = copyOfFixture(SAMPLE_DB, 0o600);
    const { archive } = await backupTo(join(tempDir(), "b"), { source });
    expect((await verifyBackup(archive)).ok).toBe(true);
    const bytes = readFileSync(archive);
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] as number) ^ 0xff;
    writeFileSync(archive, bytes);

    const report = await verifyBackup(archive);
    expect(report.ok).toBe(false);
    expect(report.problems.join(" ")).toMatch(/does not decompress|sha256/);

    const target = copyOfFixture(V30_SAMPLE_DB, 0o600);
    const before = fileState(target);
    await expect(restoreFrom(archive, { target })).rejects.toBeInstanceOf(ArchiveInvalidError);
    expect(fileState(target)).toEqual(before);
  });

  it("that decompresses to another database than its manifest describes fails on its sha256", async () => {
    const dir = join(tempDir(), "b");
    const { archive } = await backupTo(dir, { source: copyOfFixture(SAMPLE_DB, 0o600) });
    writeFileSync(archive, gzipSync(readFileSync(V30_SAMPLE_DB)));
    const report = await verifyBackup(archive);
    expect(report.ok).toBe(false);
    expect(report.problems.join(" ")).toMatch(/archive's sha256 .*snapshot inside is/);
  });

  it("without its manifest is listed as unfinished and refused", async () => {
    const dir = join(tempDir(), "b");
    const { archive, manifestPath } = await backupTo(dir, { source: copyOfFixture(SAMPLE_DB, 0o600) });
    writeFileSync(manifestPath, "{ not json");
    expect(listBackups(dir)[0]?.problem).toMatch(/not readable JSON/);
    expect((await verifyBackup(archive)).ok).toBe(false);
    await expect(restoreFrom(archive, { target: join(tempDir(), "state.db") })).rejects.toMatchObject({
      code: "ARCHIVE_INVALID",
    });
  });
});

describe("rotation", () => {
  it("keeps exactly the N newest backups of the source", async () => {
    const source = copyOfFixture(SAMPLE_DB, 0o600);
    const other = copyOfFixture(V30_SAMPLE_DB, 0o600);
    const dir = join(tempDir(), "b");
    const otherBackup = await backupTo(dir, { source: other });
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await backupTo(dir, { source, keep: 3 })).archive);
    const left = listBackups(dir).filter((b) => b.manifest?.source.path === source);
    expect(left.map((b) => b.archive)).toEqual(made.slice(2));
    expect(left.every((b) => b.problem === null)).toBe(true);
    expect(existsSync(otherBackup.archive)).toBe(true);
    expect(readdirSync(dir)).toHaveLength(8);
  });

  it("refuses a keep that is not a positive integer", async () => {
    await expect(backupTo(tempDir(), { source: copyOfFixture(SAMPLE_DB), keep: 0 })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });
});
