import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { type CliResult, cliOn, SAMPLE_DB, tempDir } from "./helpers/cli.js";
import { otherUserUnavailable, sharedTempDir, stageCliForUser } from "./helpers/stage-for-user.js";

const here = dirname(fileURLToPath(import.meta.url));
/** A file written by upstream Hermes Agent at schema v30 (see the store's fixtures README). */
const V30_SAMPLE_DB = resolve(here, "../../../packages/store/test/fixtures/reference/hermes-v30-sample.db");

/** The file's bytes, its mode, and its folder's entries: what a read must leave as it was. */
function state(path: string) {
  return {
    sha256: createHash("sha256").update(readFileSync(path)).digest("hex"),
    mode: (statSync(path).mode & 0o7777).toString(8),
    listing: readdirSync(dirname(path)).sort(),
  };
}

/** A copy of `fixture` (mode 0644, so a chmod would show) in a fresh folder. */
function copy(fixture: string, dir = tempDir()): string {
  const path = join(dir, "state.db");
  copyFileSync(fixture, path);
  chmodSync(path, 0o644);
  return path;
}

// One of each reading command, with the options that take other paths through the store.
const READING_COMMANDS: string[][] = [
  ["list", "--all", "--include-archived", "--include-hidden"],
  ["show", "Fix Docker Build"],
  ["search", "docker"],
  ["search", "桂林"],
  ["stats", "--by", "model"],
  ["export", "--format", "json"],
  ["doctor"],
];

const TG = "20260102_120000_tg0001";

/** One of each writing command, with arguments that would change the sample if it ran. */
function writingCommands(importFile: string): string[][] {
  return [
    ["title", TG, "Mine"],
    ["fork", TG],
    ["prune", "--older-than", "0"],
    ["delete", TG, "--yes"],
    ["import", importFile],
    ["doctor", "--repair"],
  ];
}

/** One session of `path` exported as JSONL into `dir` (readable by every user): an import source. */
function exportOne(path: string, dir: string): string {
  const file = join(dir, "one.jsonl");
  const r = cliOn(path, ["export", TG]);
  expect(r.code, r.stderr).toBe(0);
  writeFileSync(file, r.stdout);
  chmodSync(file, 0o644);
  return file;
}

describe("reading commands leave the file as they found it", { timeout: 240_000 }, () => {
  it.each([
    ["the reference's v11 sample (WAL mode)", SAMPLE_DB],
    ["a newer agent's v30 sample (rollback journal)", V30_SAMPLE_DB],
  ])("on %s: bytes, mode and folder unchanged by every reading command", (_name, fixture) => {
    for (const args of READING_COMMANDS) {
      const path = copy(fixture);
      const before = state(path);
      const r = cliOn(path, args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      expect(state(path), args.join(" ")).toEqual(before);
    }
  });
});

describe("reading commands on a newer agent's file (schema v30) show the agent's view", {
  timeout: 240_000,
}, () => {
  const run = (args: string[]): CliResult => {
    const path = copy(V30_SAMPLE_DB);
    const before = state(path);
    const r = cliOn(path, args);
    expect(r.code, r.stderr).toBe(0);
    expect(state(path)).toEqual(before);
    return r;
  };

  it("show: the compacted session's summary and carried tail, not the superseded originals", () => {
    const json = JSON.parse(run(["show", "20260103_080000_dc0001", "--json"]).stdout) as {
      messages: Array<{ id: number; role: string; content: string | null }>;
    };
    expect(json.messages).toHaveLength(91);
    expect(json.messages.map((m) => m.id).slice(-3)).toEqual([101, 102, 103]);
    expect(json.messages.map((m) => m.id)).not.toContain(99);
    expect(json.messages.at(-3)?.content).toMatch(/^\[CONTEXT SUMMARY\]/);
    const text = run(["show", "20260103_080000_dc0001"]).stdout;
    expect(text).toContain("[CONTEXT SUMMARY]: Steps 0-28");
    expect(text).not.toContain("#99 ");
    expect(text).not.toContain("#100 ");
  });

  it("show and Markdown: the rewound turn is gone; the export keeps it, marked superseded; the shared system prompt is there", () => {
    const show = JSON.parse(run(["show", "20260107_090000_cli007", "--json"]).stdout) as {
      system_prompt: string | null;
      messages: Array<{ content: string | null }>;
    };
    expect(show.system_prompt).toBe("You are Hermes.");
    expect(show.messages.map((m) => m.content)).toEqual([
      "Rename the helper to parse_config",
      "Done: parse_config is used in 3 files.",
    ]);
    const exported = JSON.parse(run(["export", "--format", "json"]).stdout) as Array<{
      id: string;
      system_prompt: string | null;
      messages: Array<{ id: number; view_state?: string }>;
    }>;
    const prompts = exported.filter((s) => s.system_prompt === "You are Hermes.").map((s) => s.id);
    expect(prompts.sort()).toEqual([
      "20260101_090000_cli001",
      "20260101_093000_cli002",
      "20260107_090000_cli007",
    ]);
    // The JSON export is lossless: the rewound rows 116 and 117 too, each with its view state.
    const states = exported
      .find((s) => s.id === "20260107_090000_cli007")
      ?.messages.map((m) => [m.id, m.view_state]);
    expect(states).toEqual([
      [114, "active"],
      [115, "active"],
      [116, "superseded"],
      [117, "superseded"],
    ]);
    expect(run(["export", "20260107_090000_cli007", "--format", "md"]).stdout).not.toContain(
      "test_old_config",
    );
  });

  it("list hides archived and hidden sessions unless asked, with the agent's counters", () => {
    const rows = JSON.parse(run(["list", "--json", "--limit", "100"]).stdout) as Array<{
      id: string;
      message_count: number;
    }>;
    const ids = rows.map((r) => r.id);
    expect(ids).not.toContain("20260106_000000_homeassistant");
    expect(ids).not.toContain("20260106_000000_matrix");
    expect(rows.find((r) => r.id === "20260103_080000_dc0001")?.message_count).toBe(3);
    const all = JSON.parse(
      run(["list", "--json", "--limit", "100", "--include-archived", "--include-hidden"]).stdout,
    ) as Array<{ id: string }>;
    expect(all.map((r) => r.id)).toEqual(
      expect.arrayContaining(["20260106_000000_homeassistant", "20260106_000000_matrix"]),
    );
  });

  it("search finds what the agent's indexes hold, never a rewound row; stats count active rows", () => {
    expect(run(["search", "deleted"]).stdout).toContain("No matches");
    const hits = JSON.parse(run(["search", "parse_config", "--json"]).stdout) as Array<{ id: number }>;
    expect(hits.map((h) => h.id).sort()).toEqual([114, 115]);
    const cjk = JSON.parse(run(["search", "桂林", "--json"]).stdout) as Array<{ session_id: string }>;
    expect(cjk.map((h) => h.session_id)).toEqual(["20260102_120000_tg0001"]);
    // stats counts what list shows: the hidden matrix and archived homeassistant sessions
    // (one message each) only when asked.
    const stats = (...args: string[]) =>
      JSON.parse(run(["stats", "--json", ...args]).stdout) as { sessions: number; messages: number };
    expect(stats()).toMatchObject({ sessions: 13, messages: 23 });
    expect(stats("--include-hidden")).toMatchObject({ sessions: 14, messages: 24 });
    expect(stats("--include-archived", "--include-hidden")).toMatchObject({ sessions: 15, messages: 25 });
  });

  it("search leaves out hidden and archived sessions, as list does, unless asked", () => {
    const ids = (...args: string[]) =>
      (JSON.parse(run(["search", ...args, "--json"]).stdout) as Array<{ id: number }>).map((h) => h.id);
    // 110 is the hidden matrix session's only message, 111 the archived homeassistant one's.
    expect(ids('"from matrix"')).toEqual([]);
    expect(ids('"from matrix"', "--include-hidden")).toEqual([110]);
    expect(ids('"from homeassistant"')).toEqual([]);
    expect(ids('"from homeassistant"', "--include-archived")).toEqual([111]);
  });

  it("doctor reports the schema version, the journal mode and why the file is read-only", () => {
    const report = JSON.parse(run(["doctor", "--json"]).stdout) as {
      ok: boolean;
      checks: Array<{ name: string; status: string; detail: string }>;
    };
    expect(report.ok).toBe(true);
    const check = (name: string) => report.checks.find((c) => c.name === name);
    expect(check("schema version")).toMatchObject({ status: "warn" });
    expect(check("schema version")?.detail).toMatch(/^v30, written by a newer Hermes Agent/);
    expect(check("journal mode")?.detail).toMatch(/^rollback journal/);
    expect(check("access")?.detail).toContain("newer agent");
    expect(check("permissions state.db")?.detail).toMatch(/^0644/);
    expect(check("message counters")?.status).toBe("ok");
  });

  it("a writing command refuses with SCHEMA_NEWER and changes nothing", () => {
    const path = copy(V30_SAMPLE_DB);
    const before = state(path);
    const r = cliOn(path, ["title", "20260103_080000_dc0001", "Renamed"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/schema version 30.*version 11.*\[SCHEMA_NEWER\]/);
    // The operation the user asked for, in words, not the store's method.
    expect(r.stderr).toMatch(/^error: Setting a title is refused: .*whose gateway is its only writer/);
    expect(r.stderr).not.toContain("setSessionTitle");
    expect(state(path)).toEqual(before);
  });
});

describe("a file of an unknown future version (v47) gets the same safety", { timeout: 240_000 }, () => {
  it("reading commands read it and leave it as it was; writing commands refuse and change nothing", () => {
    const path = copy(SAMPLE_DB);
    const db = new Database(path);
    db.exec("UPDATE schema_version SET version = 47");
    db.close();
    const importFile = exportOne(path, tempDir());
    const before = state(path);
    for (const args of READING_COMMANDS) {
      const r = cliOn(path, args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      expect(state(path), args.join(" ")).toEqual(before);
    }
    const shown = JSON.parse(cliOn(path, ["show", TG, "--json"]).stdout) as {
      messages: Array<{ id: number }>;
    };
    expect(shown.messages.map((m) => m.id)).toEqual([7, 8, 9, 10]);
    for (const args of writingCommands(importFile)) {
      const r = cliOn(path, args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toMatch(
        args[0] === "doctor"
          ? /schema v47 \(a newer Hermes Agent's\)/
          : /schema version 47, newer than version 11.*\[SCHEMA_NEWER\]/,
      );
      expect(state(path), args.join(" ")).toEqual(before);
    }
    const migrate = cliOn(path, ["migrate"]);
    expect(migrate.stdout).toContain("schema v47, newer than v11; left as it is");
    expect(state(path)).toEqual(before);
  });
});

const otherUser = otherUserUnavailable();
if (otherUser !== null) console.warn(`[skipped] reading as another user: ${otherUser}`);

describe.skipIf(otherUser !== null)("a file in a folder this user cannot write", { timeout: 240_000 }, () => {
  it("can be listed and searched by nobody, and is left as it was", () => {
    const cli = stageCliForUser();
    // The folder and the file belong to root: nobody can read and traverse, not write.
    const dir = sharedTempDir("hermes-foreign-");
    const path = copy(SAMPLE_DB, dir);
    const before = state(path);
    const list = cli.runAs("nobody", ["--db", path, "list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as Array<{ id: string }>).map((r) => r.id)).toContain(
      "20260102_120000_tg0001",
    );
    const search = cli.runAs("nobody", ["--db", path, "search", "docker", "--json"]);
    expect(search.code, search.stderr).toBe(0);
    expect((JSON.parse(search.stdout) as unknown[]).length).toBeGreaterThan(0);
    const cjk = cli.runAs("nobody", ["--db", path, "search", "桂林", "--json"]);
    expect((JSON.parse(cjk.stdout) as Array<{ session_id: string }>).map((h) => h.session_id)).toEqual([
      "20260102_120000_tg0001",
    ]);
    const doctor = cli.runAs("nobody", ["--db", path, "doctor", "--json"]);
    const access = (
      JSON.parse(doctor.stdout) as { checks: Array<{ name: string; detail: string }> }
    ).checks.find((c) => c.name === "access");
    expect(access?.detail).toMatch(/^read-only for this user: .*EACCES/);
    // A write says why it cannot be done, in one line.
    const title = cli.runAs("nobody", ["--db", path, "title", "20260102_120000_tg0001", "Mine"]);
    expect(title.code).toBe(1);
    expect(title.stderr).toMatch(/cannot write .*\[STORE_READ_ONLY\]/);
    expect(state(path)).toEqual(before);
  });

  it("every writing command, run by nobody, fails saying why and changes nothing", () => {
    const cli = stageCliForUser();
    const dir = sharedTempDir("hermes-foreign-");
    const path = copy(SAMPLE_DB, dir);
    const importFile = exportOne(path, sharedTempDir("hermes-import-"));
    const before = state(path);
    for (const args of writingCommands(importFile)) {
      const r = cli.runAs("nobody", ["--db", path, ...args]);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(1);
      expect(`${r.stdout}\n${r.stderr}`, args.join(" ")).toMatch(/cannot write .*\[STORE_READ_ONLY\]/);
      expect(state(path), args.join(" ")).toEqual(before);
    }
  });
});
