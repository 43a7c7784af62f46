import { chmodSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { cliInPty, cliOn, copyOfSample, fingerprint, oneErrorLine, tempDir } from "./helpers/cli.js";

/** A copy of the sample as an old file: schema v9, without the v11 search tables. */
function oldFile(): string {
  const path = copyOfSample();
  const db = new Database(path);
  for (const t of ["insert", "delete", "update"]) {
    db.exec(`DROP TRIGGER IF EXISTS messages_fts_${t}; DROP TRIGGER IF EXISTS messages_fts_trigram_${t};`);
  }
  db.exec("DROP TABLE messages_fts; DROP TABLE messages_fts_trigram; UPDATE schema_version SET version = 9");
  db.close();
  return path;
}

describe("doctor", { timeout: 240_000 }, () => {
  it("detects a damaged search index (exit 1) and --repair rebuilds it (exit 0)", () => {
    const path = copyOfSample();
    const db = new Database(path);
    // Message 1 is dropped from the word index (as if a write had bypassed the triggers):
    // search loses it, and FTS5's check against messages fails.
    db.exec(`INSERT INTO messages_fts(messages_fts, rowid, content, tool_calls, tool_name)
             SELECT 'delete', id, content, tool_calls, tool_name FROM messages WHERE id = 1`);
    db.close();
    const hitIds = () =>
      (
        JSON.parse(cliOn(path, ["search", "docker", "--json", "--limit", "50"]).stdout) as Array<{
          id: number;
        }>
      ).map((h) => h.id);
    expect(hitIds()).not.toContain(1);
    const broken = cliOn(path, ["doctor", "--json"]);
    expect(broken.code).toBe(1);
    const report = JSON.parse(broken.stdout) as {
      ok: boolean;
      checks: Array<{ name: string; status: string }>;
    };
    expect(report.ok).toBe(false);
    const fts = report.checks.find((c) => /search index messages_fts\b(?!_)/.test(c.name))!;
    expect(fts.status).toBe("fail");
    expect(report.checks.find((c) => c.name.includes("messages_fts_trigram"))!.status).toBe("ok");
    const text = cliOn(path, ["doctor"]);
    expect(text.stdout).toMatch(/FAIL\s+search index messages_fts /);
    expect(text.stdout).toMatch(/\n1 check failed\.\n/);
    const repaired = cliOn(path, ["doctor", "--repair"]);
    expect(repaired.code, repaired.stdout + repaired.stderr).toBe(0);
    expect(repaired.stdout).toContain("Search indexes rebuilt.");
    expect(repaired.stdout).not.toContain("FAIL");
    expect(hitIds()).toContain(1);
    expect(cliOn(path, ["doctor"]).code).toBe(0);
  });

  it("--repair shows progress on a terminal", () => {
    const path = copyOfSample();
    const r = cliInPty(["--db", path, "doctor", "--repair"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/rebuilding search indexes/);
    expect(r.stdout).toContain("Search indexes rebuilt.");
  });

  it("warns about permissions that let others read the history", () => {
    const path = copyOfSample();
    chmodSync(path, 0o644);
    const r = cliOn(path, ["doctor", "--json"]);
    const checks = (
      JSON.parse(r.stdout) as { checks: Array<{ name: string; status: string; detail: string }> }
    ).checks;
    const perm = checks.find((c) => c.name === "permissions state.db")!;
    expect(perm.status).toBe("warn");
    expect(perm.detail).toMatch(/^0644 \(readable by others/);
  });

  it("reports a database planted as a symbolic link, and every command refuses it", () => {
    const target = copyOfSample();
    const link = join(tempDir(), "state.db");
    symlinkSync(target, link);
    const before = fingerprint(target);
    const r = cliOn(link, ["doctor", "--json"]);
    expect(r.code).toBe(1);
    const checks = (
      JSON.parse(r.stdout) as { checks: Array<{ name: string; status: string; detail: string }> }
    ).checks;
    expect(checks.find((c) => c.name === `file ${link}`)).toMatchObject({ status: "fail" });
    expect(checks.find((c) => c.name === "open")?.detail).toMatch(/symbolic link.*\[UNSAFE_PATH\]$/);
    const list = cliOn(link, ["list"]);
    expect(list.code).toBe(1);
    expect(oneErrorLine(list)).toMatch(/symbolic link.*\[UNSAFE_PATH\]$/);
    expect(fingerprint(target)).toBe(before);
  });

  it("prints the short-CJK side index's state: not built, then a build interrupted midway, read-only", async () => {
    const path = copyOfSample();
    const sideIndex = () => {
      const r = cliOn(path, ["doctor", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      const checks = (
        JSON.parse(r.stdout) as { checks: Array<{ name: string; status: string; detail: string }> }
      ).checks;
      return checks.find((c) => c.name === "side index short-CJK");
    };
    expect(sideIndex()).toEqual({
      name: "side index short-CJK",
      status: "ok",
      detail:
        "not built yet (built on a worker thread at the first 1–2-character CJK search; 109 messages to index)",
    });
    // The CLI's reads never write: a writable store builds it (a small file: inline).
    const store = await openSessionStore({ path });
    expect(await store.searchMessages("测试")).toHaveLength(1);
    await store.close();
    expect(sideIndex()).toMatchObject({ status: "ok", detail: "ready: 109 messages indexed" });
    // As a build stopped midway leaves it: the cursor at message 50 of 109.
    const db = new Database(path);
    db.exec("UPDATE hermes_search_state SET value = 50 WHERE key = 'backfill_next'");
    db.close();
    const before = fingerprint(path);
    expect(sideIndex()).toEqual({
      name: "side index short-CJK",
      status: "warn",
      detail:
        "building: 50 of 109 messages (45%); resumes at the next short CJK search of a writable store, searches scan meanwhile",
    });
    expect(cliOn(path, ["doctor"]).stdout).toMatch(
      /warn\s+side index short-CJK\s+building: 50 of 109 messages/,
    );
    expect(fingerprint(path)).toBe(before);
  });

  it("reports an old schema as failed, without upgrading or changing the file", () => {
    const path = oldFile();
    const before = fingerprint(path);
    const r = cliOn(path, ["doctor", "--json"]);
    expect(r.code).toBe(1);
    const checks = (
      JSON.parse(r.stdout) as { checks: Array<{ name: string; status: string; detail: string }> }
    ).checks;
    expect(checks.find((c) => c.name === "schema version")).toMatchObject({ status: "fail" });
    expect(fingerprint(path)).toBe(before);
  });
});

describe("migrate", { timeout: 240_000 }, () => {
  it("read commands refuse an old file without touching it; migrate upgrades it", () => {
    const path = oldFile();
    const before = fingerprint(path);
    for (const args of [["list"], ["search", "docker"], ["show", "20260101_090000_cli001"]]) {
      const r = cliOn(path, args);
      expect(r.code).toBe(1);
      expect(oneErrorLine(r)).toBe(
        `error: ${path} has schema v9; run 'hermes-sessions migrate' to upgrade it to v11`,
      );
    }
    expect(fingerprint(path)).toBe(before);
    const m = cliOn(path, ["migrate"]);
    expect(m.code, m.stderr).toBe(0);
    expect(m.stdout).toMatch(
      new RegExp(`^Upgraded ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} from v9 to v11\\.\\nSteps: `),
    );
    // The search index was rebuilt from the messages: search finds old rows.
    const hits = JSON.parse(cliOn(path, ["search", "docker", "--json"]).stdout) as unknown[];
    expect(hits.length).toBeGreaterThan(0);
    const again = cliOn(path, ["migrate", "--json"]);
    expect(JSON.parse(again.stdout)).toMatchObject({ fromVersion: 11, toVersion: 11, applied: [] });
  });

  it("shows progress on a terminal", () => {
    const path = oldFile();
    const r = cliInPty(["--db", path, "migrate"]);
    expect(r.code).toBe(0);
    // The search index backfill reports each step: the bar reaches 100% of the 109 messages.
    expect(r.stdout).toMatch(/migrating \[#{28}\] 100% 109\/109 v11-fts-reindex/);
    expect(r.stdout).toContain("from v9 to v11");
  });

  it("refuses a SQLite file that is not a state.db, and leaves it alone", () => {
    const path = join(tempDir(), "other.db");
    const db = new Database(path);
    db.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hello')");
    db.close();
    const before = fingerprint(path);
    const r = cliOn(path, ["migrate"]);
    expect(r.code).toBe(1);
    expect(oneErrorLine(r)).toMatch(/is a SQLite database but not a Hermes state\.db/);
    expect(fingerprint(path)).toBe(before);
  });
});
