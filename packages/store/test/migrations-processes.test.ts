import { spawn } from "node:child_process";
import { join } from "node:path";
import { openSessionStore } from "@hermes/store";
import { describe, expect, it } from "vitest";
import { ftsMatch, withFile } from "./fixtures/file-inspection.js";
import { buildLegacyFile, TOOL_ONLY_TOKENS } from "./fixtures/legacy-files.js";
import { referenceSchema, schemaOf } from "./helpers/reference-schema.js";
import { tempDir } from "./helpers/temp-dir.js";

const CHILD = join(import.meta.dirname, "child", "migration-opener.mjs");

interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the opener; `onLine` sees each stdout line and may kill the child. */
function runOpener(args: string[], onLine?: (line: string, kill: () => void) => void): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let pending = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d;
      pending += d;
      for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        onLine?.(line, () => child.kill("SIGKILL"));
      }
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const objects = (path: string) => schemaOf(path).map((o) => `${o.type} ${o.name}`);

describe("an upgrade interrupted by SIGKILL", () => {
  it("leaves the file at its old version, intact; the next open completes the upgrade", async () => {
    const path = join(tempDir(), "state.db");
    // Big enough that the backfill runs for a while after its first progress report.
    const built = buildLegacyFile(path, "v1", { bulkMessages: 300_000 });
    const before = schemaOf(path);

    let killedAt: string | undefined;
    const result = await runOpener([path, "0", "--progress"], (line, kill) => {
      const m = /^progress (\S+) (\d+) (\d+)$/.exec(line);
      // Kill inside the v11 backfill, after it has written some of the new index.
      if (m && m[1] === "v11-fts-reindex" && Number(m[2]) > 0 && killedAt === undefined) {
        killedAt = line;
        kill();
      }
    });
    expect(result.signal, result.stderr).toBe("SIGKILL");
    expect(killedAt).toMatch(/^progress v11-fts-reindex \d+ 300009$/);
    expect(result.stdout).not.toContain('"migration"');

    // Nothing of the upgrade survives: old version, old objects (no new columns, no trigram
    // table, old FTS definition), all rows, a sound file.
    expect(schemaOf(path)).toEqual(before);
    withFile(path, (db) => {
      expect(db.prepare("SELECT version FROM schema_version").all()).toEqual([{ version: 1 }]);
      expect(db.prepare("SELECT COUNT(*) FROM messages").pluck().get()).toBe(built.messages);
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    });

    const store = await openSessionStore({ path });
    expect(store.migration.fromVersion).toBe(1);
    expect(store.migration.toVersion).toBe(11);
    expect(store.migration.applied).toContain("v11-fts-reindex");
    expect(await store.messageCount()).toBe(built.messages);
    await store.close();
    expect(objects(path)).toEqual(referenceSchema().map((o) => `${o.type} ${o.name}`));
    withFile(path, (db) => {
      expect(ftsMatch(db, "messages_fts", TOOL_ONLY_TOKENS.inToolCalls)).toHaveLength(1);
      expect(db.prepare("SELECT COUNT(*) FROM messages_fts_docsize").pluck().get()).toBe(built.messages);
    });
  });
});

describe("eight processes opening the same old file at the same instant", () => {
  it("exactly one upgrades it, none fails, and the result is a valid v11 file", async () => {
    const path = join(tempDir(), "state.db");
    // A v1 file: every process would add columns (and hit "duplicate column name") and
    // rebuild both search indexes, if it did not find the work already done.
    const built = buildLegacyFile(path, "v1", { bulkMessages: 40_000 });
    const startAt = String(Date.now() + 1_500);
    // A short write deadline: the seven that wait must wait for the upgrade itself (its own,
    // long deadline), not give up with STORE_BUSY after the deadline of an ordinary write.
    const results = await Promise.all(
      Array.from({ length: 8 }, () => runOpener([path, startAt, "--write-deadline=250"])),
    );

    const reports = results.map((r) => {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe("");
      return JSON.parse(r.stdout.trim()).migration as {
        fromVersion: number | null;
        toVersion: number | null;
        applied: string[];
        warnings: string[];
      };
    });
    const upgraders = reports.filter((r) => r.applied.length > 0);
    expect(upgraders).toHaveLength(1);
    expect(upgraders[0]?.applied).toEqual([
      "core-tables",
      "reconcile-columns",
      "v10-trigram",
      "v11-fts-reindex",
      "stamp-v11",
      "title-unique-index",
    ]);
    for (const r of reports) {
      expect(r.toVersion).toBe(11);
      expect(r.warnings).toEqual([]);
    }
    // Every process read the file before any of them upgraded it (they started together),
    // or found it done: both are correct, none may see a half-upgraded file.
    expect(reports.every((r) => r.fromVersion === 1 || r.fromVersion === 11)).toBe(true);

    expect(objects(path)).toEqual(referenceSchema().map((o) => `${o.type} ${o.name}`));
    withFile(path, (db) => {
      expect(db.prepare("SELECT version FROM schema_version").all()).toEqual([{ version: 11 }]);
      expect(db.prepare("SELECT COUNT(*) FROM messages").pluck().get()).toBe(built.messages);
      expect(db.prepare("SELECT COUNT(*) FROM messages_fts_docsize").pluck().get()).toBe(built.messages);
      expect(db.prepare("SELECT COUNT(*) FROM messages_fts_trigram_docsize").pluck().get()).toBe(
        built.messages,
      );
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    });
    withFile(
      path,
      (db) => {
        for (const t of ["messages_fts", "messages_fts_trigram"]) {
          expect(() => db.prepare(`INSERT INTO ${t}(${t}) VALUES('integrity-check')`).run()).not.toThrow();
        }
      },
      true,
    );
  });
});
