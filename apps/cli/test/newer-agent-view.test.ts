import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { type CliResult, cliOn, SAMPLE_DB, tempDir } from "./helpers/cli.js";

// What the CLI shows of a newer agent's file (schema v30, and v31 with stable message ids),
// as the agent shows it: counts of what is listed, marks, the compaction point, uids. Rows
// asserted are those of shared/fixtures/UPSTREAM.md.
const here = dirname(fileURLToPath(import.meta.url));
const FIXTURES = resolve(here, "../../../packages/store/test/fixtures/reference");
const V30 = join(FIXTURES, "hermes-v30-sample.db");
const V31 = join(FIXTURES, "hermes-v31-sample.db");

const DC = "20260103_080000_dc0001";
const CLI001 = "20260101_090000_cli001"; // pinned, ended
const CLI002 = "20260101_093000_cli002"; // pinned, ended
const CRON = "20260106_000000_cron"; // v31: auto-archived
const ARCHIVED = "20260106_000000_homeassistant";
const HIDDEN = "20260106_000000_matrix";

/** The file's bytes, mode and folder listing: what every reading command must leave as it was. */
function state(path: string) {
  return {
    sha256: createHash("sha256").update(readFileSync(path)).digest("hex"),
    mode: (statSync(path).mode & 0o7777).toString(8),
    listing: readdirSync(dirname(path)).sort(),
  };
}

/** Runs the CLI on a fresh copy of `fixture` and checks that the copy is unchanged. */
function run(fixture: string, args: string[], code = 0): CliResult {
  const path = join(tempDir(), "state.db");
  copyFileSync(fixture, path);
  chmodSync(path, 0o600);
  const before = state(path);
  const r = cliOn(path, args);
  expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(code);
  expect(state(path), args.join(" ")).toEqual(before);
  return r;
}

const json = <T>(fixture: string, args: string[]): T => JSON.parse(run(fixture, args).stdout) as T;

describe.each([
  ["v30", V30],
  ["v31", V31],
])("doctor on a newer agent's file (%s)", { timeout: 120_000 }, (_name, fixture) => {
  it("gives the short-CJK index's advice once, and only what is true of a file it never writes", () => {
    const text = run(fixture, ["doctor"]).stdout;
    expect(text).not.toContain("created on the first short CJK search");
    expect(text).not.toContain("at the first 1–2-character CJK search");
    const report = json<{ checks: Array<{ name: string; detail: string }> }>(fixture, ["doctor", "--json"]);
    const cjk = report.checks.filter((c) => /cjk/i.test(c.name) || /CJK/.test(c.detail));
    expect(cjk.map((c) => c.name)).toEqual(["side index short-CJK"]);
    expect(cjk[0]?.detail).toMatch(
      /^not built, and never built here: the file belongs to a newer Hermes Agent \(schema 3[01]\)/,
    );
    expect(cjk[0]?.detail).toContain("scan the messages instead");
  });
});

describe.each([
  ["v30", V30],
  ["v31", V31],
])(
  "prune on a newer agent's file (%s) never selects pinned sessions",
  { timeout: 120_000 },
  (_name, fixture) => {
    const ids = (args: string[], path = fixture) =>
      json<{ sessions: Array<{ id: string }> }>(path, [
        "prune",
        "--older-than",
        "90",
        "--dry-run",
        "--json",
        ...args,
      ])
        .sessions.map((s) => s.id)
        .sort();

    it("--dry-run lists cli003 only: cli001 and cli002 are ended and old, but pinned", () => {
      expect(ids([])).toEqual(["20260104_100000_cli003"]);
      const text = run(fixture, ["prune", "--older-than", "90", "--dry-run"]).stdout;
      expect(text).not.toContain(CLI001);
      expect(text).not.toContain(CLI002);
      expect(text).toContain("Would delete 1 ended session started more than 90 days ago");
    });

    it("archived and hidden sessions only with --include-archived / --include-hidden; pinned never", () => {
      // A copy where the archived and the hidden session have ended (in the fixture they are open).
      const path = join(tempDir(), "ended.db");
      copyFileSync(fixture, path);
      const db = new Database(path);
      db.prepare(
        "UPDATE sessions SET ended_at = started_at + 60, end_reason = 'user_exit' WHERE id IN (?, ?)",
      ).run(ARCHIVED, HIDDEN);
      db.close();
      expect(ids([], path)).toEqual(["20260104_100000_cli003"]);
      expect(ids(["--include-hidden"], path)).toEqual(["20260104_100000_cli003", HIDDEN]);
      expect(ids(["--include-archived"], path)).toEqual(["20260104_100000_cli003", ARCHIVED]);
      expect(ids(["--include-archived", "--include-hidden"], path)).toEqual([
        "20260104_100000_cli003",
        ARCHIVED,
        HIDDEN,
      ]);
    });
  },
);

describe("stats counts what list shows (v31)", { timeout: 120_000 }, () => {
  it("leaves the auto-archived cron, the archived and the hidden session out unless asked", () => {
    const listed = json<Array<{ id: string }>>(V31, ["list", "--all", "--json", "--limit", "100"]);
    const stats = (...args: string[]) =>
      json<{ sessions: number; messages: number }>(V31, ["stats", "--json", ...args]);
    expect(stats().sessions).toBe(listed.length);
    expect(stats()).toMatchObject({ sessions: 12 });
    expect(
      json<Array<{ group: string }>>(V31, ["stats", "--by", "source", "--json"]).map((r) => r.group),
    ).not.toEqual(expect.arrayContaining(["cron"]));
    expect(stats("--include-archived")).toMatchObject({ sessions: 14 });
    expect(stats("--include-archived", "--include-hidden")).toMatchObject({ sessions: 15 });
  });
});

describe("show on a compacted session (dc0001)", { timeout: 120_000 }, () => {
  it.each([
    ["v30", V30],
    ["v31", V31],
  ])(
    "%s: the header names both counts, and the compaction point is marked where the summary begins",
    (_n, fixture) => {
      const text = run(fixture, ["show", DC, "--no-pager"]).stdout;
      expect(text).toContain("3 messages in the agent's context, 91 shown");
      const lines = text.split("\n");
      const point = lines.findIndex((l) => l.startsWith("━━ compaction point"));
      expect(lines[point]).toContain("the 88 messages above were summarized into the summary below");
      // Right after the last summarized row (#98), right before the summary (#101).
      expect(
        lines
          .slice(0, point)
          .filter((l) => l.startsWith("── "))
          .at(-1),
      ).toMatch(/^── user #98 .* · summarized$/);
      expect(lines.slice(point + 1).find((l) => l.startsWith("── "))).toMatch(
        /^── user #101 .* · compaction summary$/,
      );
      expect(lines.filter((l) => l.startsWith("━━ compaction point"))).toHaveLength(1);
      // The rows the agent still has are not marked.
      expect(lines.find((l) => l.startsWith("── assistant #102"))).not.toContain(" · ");
    },
  );

  it("a v11 session keeps its one count and has no marks", () => {
    const text = run(SAMPLE_DB, ["show", "20260102_120000_tg0001", "--no-pager"]).stdout;
    expect(text.split("\n")[2]).toMatch(/^4 messages · /);
    expect(text).not.toContain("compaction point");
    expect(text).not.toContain("in the agent's context");
  });
});

describe("marks: pinned, archived, auto-archived, hidden (v31)", { timeout: 120_000 }, () => {
  it("list marks each session by its flags", () => {
    const text = run(V31, [
      "list",
      "--all",
      "--include-archived",
      "--include-hidden",
      "--limit",
      "100",
    ]).stdout;
    const line = (id: string) => text.split("\n").find((l) => l.startsWith(id)) ?? "";
    expect(line(CLI001)).toContain("[pinned]");
    expect(line(CLI002)).toContain("[pinned]");
    expect(line(CRON)).toContain("[auto-archived]");
    expect(line(CRON)).not.toContain("[archived]");
    expect(line(ARCHIVED)).toContain("[archived]");
    expect(line(HIDDEN)).toContain("[hidden]");
    expect(line(DC)).not.toMatch(/\[(pinned|archived|auto-archived|hidden)\]/);
  });

  it("show marks the session in its header; --json carries the flags", () => {
    expect(run(V31, ["show", CLI001, "--no-pager"]).stdout.split("\n")[0]).toMatch(
      /^Fix Docker Build {2}\[pinned\] {2}/,
    );
    expect(run(V31, ["show", CRON, "--no-pager"]).stdout.split("\n")[0]).toContain("[auto-archived]");
    expect(json<Record<string, unknown>>(V31, ["show", CRON, "--json"])).toMatchObject({
      pinned: false,
      archived: true,
      auto_archived: true,
      hidden: false,
    });
  });
});

describe("stable ids (v31): show --json and search --json carry the message uid", {
  timeout: 120_000,
}, () => {
  it("show --json: uids shared by a compacted original and its copy are not displayed twice; the summary has its own", () => {
    const shown = json<{ messages: Array<{ id: number; message_uid: string | null; view_state: string }> }>(
      V31,
      ["show", DC, "--json"],
    );
    const byId = new Map(shown.messages.map((m) => [m.id, m]));
    expect(byId.get(101)?.message_uid).toBe("3e591f29c7834237aa44810e56917b59");
    expect(byId.get(102)?.message_uid).toBe("5bf4fac7d4424dcba2b601075f10685d");
    expect(byId.get(103)?.message_uid).toBe("a787d7f5b2534171bc07984b5aaf4089");
    expect(byId.get(11)?.view_state).toBe("compacted");
    expect(shown.messages.every((m) => /^[0-9a-f]{32}$/.test(m.message_uid ?? ""))).toBe(true);
  });

  it("search --json: the hit of the row an older build appended carries its trigger-minted uid", () => {
    const hits = json<Array<{ id: number; message_uid?: string | null }>>(V31, [
      "search",
      "nightly",
      "--json",
    ]);
    expect(hits.find((h) => h.id === 118)?.message_uid).toBe("a5d1c1238c6e9f385b5e8f4c7ee4216d");
  });

  it("a v11 file's rows and hits have no uid key at all", () => {
    const hits = json<Array<Record<string, unknown>>>(SAMPLE_DB, ["search", "docker", "--json"]);
    expect(hits.length).toBeGreaterThan(0);
    for (const h of hits) expect("message_uid" in h).toBe(false);
  });
});
