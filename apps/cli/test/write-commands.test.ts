import {
  chmodSync,
  copyFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import {
  cliInPty,
  cliOn,
  copyOfSample,
  fingerprint,
  oneErrorLine,
  SAMPLE_DB,
  tempDir,
} from "./helpers/cli.js";
import { jsonlCounts, messagesText } from "./helpers/jsonl-counts.js";
import { seededDb } from "./helpers/seed.js";
import { otherUserUnavailable, sharedTempDir, stageCliForUser } from "./helpers/stage-for-user.js";

const json = <T>(r: { stdout: string; stderr: string; code: number | null }): T => {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
};

describe("title", { timeout: 240_000 }, () => {
  it("sets, reads back, clears; conflicts and over-long titles fail with one line", async () => {
    const db = await seededDb();
    const set = cliOn(db.path, ["title", db.ids.telegram, "Memory gap investigation"]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe(`${db.ids.telegram} is now 'Memory gap investigation'\n`);
    // The new title resolves the session.
    expect(cliOn(db.path, ["title", "Memory gap investigation"]).stdout).toBe("Memory gap investigation\n");
    const conflict = cliOn(db.path, ["title", db.ids.discord, "Memory gap investigation"]);
    expect(conflict.code).toBe(1);
    expect(oneErrorLine(conflict)).toBe(
      `error: Title 'Memory gap investigation' is already in use by session ${db.ids.telegram} [TITLE_CONFLICT]`,
    );
    const long = cliOn(db.path, ["title", db.ids.discord, "x".repeat(101)]);
    expect(long.code).toBe(1);
    expect(oneErrorLine(long)).toMatch(/Title too long \(101 chars, max 100\) \[TITLE_TOO_LONG\]/);
    const cleared = json<{ id: string; title: string | null }>(
      cliOn(db.path, ["title", db.ids.telegram, "--clear", "--json"]),
    );
    expect(cleared).toEqual({ id: db.ids.telegram, title: null });
    expect(cliOn(db.path, ["title", "--next", "Fix Docker build"]).stdout).toBe("Fix Docker build #3\n");
    expect(cliOn(db.path, ["title", "--next", "x", db.ids.telegram]).code).toBe(2);
    expect(cliOn(db.path, ["title"]).code).toBe(2);
  });
});

describe("fork", { timeout: 240_000 }, () => {
  it("copies the messages into a child titled by the lineage rule, or up to --at", async () => {
    const db = await seededDb();
    const fork = json<{ id: string; parent_session_id: string; title: string; message_count: number }>(
      cliOn(db.path, ["fork", db.ids.discord, "--json"]),
    );
    expect(fork.parent_session_id).toBe(db.ids.discord);
    expect(fork.title).toBe("Flaky websocket test #2");
    expect(fork.message_count).toBe(4);
    const shown = json<{ messages: Array<{ id: number; content: string }> }>(
      cliOn(db.path, ["show", db.ids.discord, "--json"]),
    );
    const at = shown.messages[1]!.id;
    // By title, 'Flaky websocket test' now means the newest of its lineage (the fork above).
    expect(json<{ id: string }>(cliOn(db.path, ["show", "Flaky websocket test", "--json"])).id).toBe(fork.id);
    const partial = cliOn(db.path, ["fork", db.ids.discord, "--at", String(at), "--title", "Plan B"]);
    expect(partial.code, partial.stderr).toBe(0);
    expect(partial.stdout).toMatch(/^Forked \S+ → \S+ 'Plan B' \(2 messages\)\n$/);
    const plan = json<{ messages: Array<{ content: string }> }>(cliOn(db.path, ["show", "Plan B", "--json"]));
    expect(plan.messages.map((m) => m.content)).toEqual(shown.messages.slice(0, 2).map((m) => m.content));
    const bad = cliOn(db.path, ["fork", db.ids.discord, "--at", "abc"]);
    expect(bad.code).toBe(2);
  });
});

describe("prune and delete", { timeout: 240_000 }, () => {
  it("prune --dry-run lists, prune deletes ended sessions older than N days, --source narrows", async () => {
    const db = await seededDb();
    const dry = cliOn(db.path, ["prune", "--older-than", "7", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(db.ids.oldCron);
    expect(dry.stdout).toMatch(/Would delete 2 ended sessions started more than 7 days ago \(dry run\)\./);
    expect(json<unknown[]>(cliOn(db.path, ["list", "--json", "--all", "--limit", "100"]))).toHaveLength(8);
    const other = cliOn(db.path, ["prune", "--older-than", "7", "--source", "telegram"]);
    expect(other.stdout).toMatch(/Deleted 0 ended sessions/);
    const done = json<{ pruned: number; sessions: Array<{ id: string }> }>(
      cliOn(db.path, ["prune", "--older-than", "7", "--json"]),
    );
    expect(done.pruned).toBe(2);
    expect(done.sessions.map((s) => s.id)).toContain(db.ids.oldCron);
    expect(json<unknown[]>(cliOn(db.path, ["list", "--json", "--all", "--limit", "100"]))).toHaveLength(6);
    expect(cliOn(db.path, ["prune"]).code).toBe(2); // --older-than is required
    expect(cliOn(db.path, ["prune", "--older-than", "-3"]).code).toBe(2);
  });

  it("delete refuses without --yes when there is no terminal, deletes with it", async () => {
    const db = await seededDb();
    const before = fingerprint(db.path);
    const refused = cliOn(db.path, ["delete", db.ids.telegram]);
    expect(refused.code).toBe(1);
    expect(oneErrorLine(refused)).toMatch(/Refusing to delete .* without --yes/);
    expect(fingerprint(db.path)).toBe(before);
    const done = cliOn(db.path, ["delete", db.ids.telegram, "--yes"]);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toBe(`Deleted ${db.ids.telegram}.\n`);
    const gone = cliOn(db.path, ["show", db.ids.telegram]);
    expect(gone.code).toBe(1);
  });

  it("delete asks on a terminal: 'n' keeps the session, 'y' deletes it", async () => {
    const db = await seededDb();
    const ids = () =>
      json<Array<{ id: string }>>(cliOn(db.path, ["list", "--json", "--all", "--limit", "100"])).map(
        (s) => s.id,
      );
    const no = cliInPty(["--db", db.path, "delete", db.ids.discord], "n\n", {}, { columns: 200 });
    // The prompt (@inquirer/confirm) defaults to no.
    expect(stripVTControlCharacters(no.stdout)).toMatch(/Delete session .* and its 4 messages\? \(y\/N\)/);
    expect(no.stdout).toContain("Nothing deleted.");
    expect(ids()).toContain(db.ids.discord);
    const yes = cliInPty(["--db", db.path, "delete", db.ids.discord], "y\n", {}, { columns: 200 });
    expect(yes.stdout).toContain(`Deleted ${db.ids.discord}.`);
    expect(ids()).not.toContain(db.ids.discord);
    // Its delegated child is kept, unlinked.
    expect(ids()).toContain(db.ids.delegate);
  });
});

describe("export and import", { timeout: 240_000 }, () => {
  it("round trip: export → import into a new file → the same sessions and messages; twice adds nothing", async () => {
    const db = await seededDb();
    const dir = tempDir();
    const file = join(dir, "backup.jsonl");
    const exported = cliOn(db.path, ["export", "--out", file]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(jsonlCounts(file).sessions).toBe(8);
    expect(exported.stderr).toBe(
      `Exported 8 sessions with ${messagesText(jsonlCounts(file).messages)} to ${file}\n`,
    );
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const target = join(dir, "restored.db");
    const first = cliOn(target, ["import", file]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^Imported 8 sessions with 25 messages; 0 already present/);
    const again = json<{ sessionsImported: number; sessionsUnchanged: number }>(
      cliOn(target, ["import", file, "--json"]),
    );
    expect(again).toMatchObject({ sessionsImported: 0, sessionsUnchanged: 8 });
    // Same content: the exports of both files differ only in the header's time.
    const a = cliOn(db.path, ["export"]).stdout.split("\n").slice(1);
    const b = cliOn(target, ["export"]).stdout.split("\n").slice(1);
    expect(b).toEqual(a);
  });

  it("a bad JSONL line is named by its line number and nothing from the file is written", async () => {
    const db = await seededDb();
    const dir = tempDir();
    const good = cliOn(db.path, ["export", db.ids.telegram]).stdout.trimEnd().split("\n");
    const file = join(dir, "bad.jsonl");
    writeFileSync(file, `${good[0]}\n${good[1]}\n{"id": "broken", \n`);
    const target = join(dir, "target.db");
    const r = cliOn(target, ["import", file]);
    expect(r.code).toBe(1);
    expect(oneErrorLine(r)).toMatch(/line 3/);
    expect(oneErrorLine(r)).toMatch(/\[IMPORT_INVALID\]$/);
    // Nothing from the file is written, and no database or sidecar is left behind.
    expect(readdirSync(dir)).toEqual(["bad.jsonl"]);
    // --skip-invalid imports the good line and lists the bad one.
    const skipped = cliOn(target, ["import", file, "--skip-invalid"]);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stdout).toMatch(/Imported 1 session with /);
    expect(skipped.stdout).toMatch(/skipped: line 3: /);
  });

  it("an unreadable import file fails before any database is created", () => {
    const dir = tempDir();
    const target = join(dir, "never.db");
    const missing = cliOn(target, ["import", join(dir, "nope.jsonl")]);
    expect(missing.code).toBe(1);
    expect(oneErrorLine(missing)).toBe(`error: Cannot read ${join(dir, "nope.jsonl")}: no such file`);
    const directory = cliOn(target, ["import", dir]);
    expect(directory.code).toBe(1);
    expect(oneErrorLine(directory)).toBe(`error: Cannot read ${dir}: not a regular file`);
    expect(existsSync(target)).toBe(false);
  });

  // As root every file is readable: the check runs the CLI as `nobody`, from a copy staged where
  // that user can read it (a clone in a private 0700 folder is out of its reach).
  it.skipIf(otherUserUnavailable() !== null)(
    "a file without read permission fails with 'permission denied' (run as nobody)",
    () => {
      const cli = stageCliForUser();
      const dir = sharedTempDir("hermes-unreadable-");
      const file = join(dir, "secret.jsonl");
      writeFileSync(file, '{"format":"hermes-sessions","version":1}\n');
      chmodSync(file, 0o000);
      const r = cli.runAs("nobody", ["--db", join(dir, "target.db"), "import", file]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`error: Cannot read ${file}: permission denied\n`);
      expect(existsSync(join(dir, "target.db"))).toBe(false);
      // A database the user cannot read: one line, nothing created or changed.
      const db = join(dir, "state.db");
      copyFileSync(SAMPLE_DB, db);
      chmodSync(db, 0o600);
      const list = cli.runAs("nobody", ["--db", db, "list"]);
      expect(list.code).toBe(1);
      expect(list.stderr).toBe(`error: Cannot read ${db} (permission denied)\n`);
    },
  );

  it("export --format json and md to a file; the sample's export imports into an empty file", () => {
    const sample = copyOfSample();
    const dir = tempDir();
    const jsonFile = join(dir, "all.json");
    expect(cliOn(sample, ["export", "--format", "json", "--out", jsonFile]).code).toBe(0);
    const all = JSON.parse(readFileSync(jsonFile, "utf8")) as Array<{ id: string; messages: unknown[] }>;
    expect(all).toHaveLength(13);
    expect(all.reduce((n, s) => n + s.messages.length, 0)).toBe(109);
    const md = join(dir, "one.md");
    expect(cliOn(sample, ["export", "20260102_120000_tg0001", "--format", "md", "--out", md]).code).toBe(0);
    expect(readFileSync(md, "utf8")).toContain("记忆断裂");
    const jsonl = join(dir, "all.jsonl");
    expect(cliOn(sample, ["export", "--out", jsonl]).code).toBe(0);
    const r = cliOn(join(dir, "copy.db"), ["import", jsonl, "--json"]);
    expect(JSON.parse(r.stdout)).toMatchObject({ sessionsImported: 13, messagesImported: 109 });
  });

  it("what export writes, import reads: a JSON export imports like the JSONL one; a bad one leaves nothing", () => {
    const sample = copyOfSample();
    const dir = tempDir();
    const jsonFile = join(dir, "all.json");
    expect(cliOn(sample, ["export", "--format", "json", "--out", jsonFile]).code).toBe(0);
    const fromJson = join(dir, "from-json.db");
    const r = cliOn(fromJson, ["import", jsonFile, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      sessionsImported: 13,
      messagesImported: 109,
      sessionsUnchanged: 0,
    });
    // The same content as the original: their JSONL exports match (the header's time aside).
    expect(cliOn(fromJson, ["export"]).stdout.split("\n").slice(1)).toEqual(
      cliOn(sample, ["export"]).stdout.split("\n").slice(1),
    );
    expect(JSON.parse(cliOn(fromJson, ["import", jsonFile, "--json"]).stdout)).toMatchObject({
      sessionsUnchanged: 13,
    });
    // A pretty-printed JSON array (edited by hand) is read too.
    const pretty = join(dir, "pretty.json");
    writeFileSync(pretty, JSON.stringify(JSON.parse(readFileSync(jsonFile, "utf8")), null, 2));
    expect(JSON.parse(cliOn(join(dir, "from-pretty.db"), ["import", pretty, "--json"]).stdout)).toMatchObject(
      {
        sessionsImported: 13,
      },
    );
    // A broken JSON export is refused in one line, and leaves no database or sidecar behind.
    const broken = join(dir, "broken.json");
    writeFileSync(
      broken,
      readFileSync(jsonFile, "utf8").replace(/\n\{"id":"20260102[^\n]*/, '\n{"id": "cut'),
    );
    const before = readdirSync(dir).sort();
    const bad = cliOn(join(dir, "never.db"), ["import", broken]);
    expect(bad.code).toBe(1);
    expect(oneErrorLine(bad)).toMatch(/^error: Cannot import .*broken\.json: line \d+ is not valid JSON/);
    expect(readdirSync(dir).sort()).toEqual(before);
  });
});
