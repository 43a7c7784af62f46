import Database from "better-sqlite3";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { cliOn, copyOfSample, fingerprint } from "./helpers/cli.js";

/** Every reference table's rows and every reference schema object, as text. */
function referenceDump(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    const parts = ["schema_version", "sessions", "messages", "state_meta"].map((t) =>
      JSON.stringify(db.prepare(`SELECT * FROM ${t} ORDER BY rowid`).all()),
    );
    parts.push(
      JSON.stringify(
        db
          .prepare(
            "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE '%hermes\\_search%' ESCAPE '\\' ORDER BY name",
          )
          .all(),
      ),
    );
    return parts.join("\n");
  } finally {
    db.close();
  }
}

// Every read command runs on a copy of the file the Python original wrote, and must leave its
// bytes exactly as they were.
describe("read commands on the reference's sample file", { timeout: 240_000 }, () => {
  const readOnly = (args: string[]) => {
    const db = copyOfSample();
    const before = fingerprint(db);
    const r = cliOn(db, args);
    expect(fingerprint(db), `${args.join(" ")} changed the file`).toBe(before);
    return r;
  };

  it("list: newest first, compression chains projected to their tip, children hidden", () => {
    const r = readOnly(["list"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+TITLE\s+SOURCE\s+MODEL\s+STARTED\s+LAST ACTIVE\s+MSGS\s+PREVIEW$/);
    expect(lines[1]).toMatch(/^20260106_000000_cron\s/);
    // The compression root is shown as its tip (#2), not as itself, named after the chain's
    // first session as the web names it (`sessionDisplayName`).
    expect(r.stdout).toMatch(/^20260101_093000_cli002\s+Fix Docker Build\s{2}/m);
    expect(r.stdout).not.toMatch(/^20260101_090000_cli001\s/m);
    // cli004 is a branch child (shown), cli006 a plain child (hidden).
    expect(r.stdout).toMatch(/^20260104_100500_cli004\s/m);
    expect(r.stdout).not.toMatch(/^20260105_090100_cli006\s/m);
    expect(r.stdout).toContain("记忆断裂 调查");
  });

  it("list --json, --source, --limit, --offset, --all", () => {
    const all = JSON.parse(readOnly(["list", "--json", "--all", "--limit", "100"]).stdout) as Array<{
      id: string;
    }>;
    expect(all.map((s) => s.id)).toContain("20260105_090100_cli006");
    const cli = JSON.parse(readOnly(["list", "--json", "--source", "cli"]).stdout) as Array<{
      source: string;
    }>;
    expect(cli.length).toBeGreaterThan(0);
    expect(cli.every((s) => s.source === "cli")).toBe(true);
    const page = JSON.parse(readOnly(["list", "--json", "--limit", "2", "--offset", "1"]).stdout) as Array<{
      id: string;
      preview: string;
      last_active: number;
    }>;
    expect(page.map((s) => s.id)).toEqual(["20260106_000000_homeassistant", "20260106_000000_matrix"]);
    expect(page[0]!.preview).toBe("universal search test from homeassistant");
    expect(typeof page[0]!.last_active).toBe("number");
  });

  it("source filters take the same forms everywhere: repeated, comma-separated, excluded", () => {
    type Row = { id: string; source: string };
    const ids = (args: string[]) =>
      (JSON.parse(readOnly(args).stdout) as Row[]).map((r) => `${r.source}:${r.id}`).sort();
    const comma = ids(["list", "--json", "--all", "--limit", "100", "--source", "cli,cron"]);
    expect(ids(["list", "--json", "--all", "--limit", "100", "-s", "cli", "-s", "cron"])).toEqual(comma);
    const cli = ids(["list", "--json", "--all", "--limit", "100", "--source", "cli"]);
    const cron = ids(["list", "--json", "--all", "--limit", "100", "--source", "cron"]);
    expect(cli.length).toBeGreaterThan(1);
    expect(cron.length).toBeGreaterThan(0);
    expect(comma).toEqual([...cli, ...cron].sort());
    const all = ids(["list", "--json", "--all", "--limit", "100"]);
    expect(ids(["list", "--json", "--all", "--limit", "100", "--exclude-source", "cli,cron"])).toEqual(
      all.filter((r) => !comma.includes(r)),
    );
    expect(readOnly(["list", "--source", "cli", "--exclude-source", "cli"]).stdout).toBe("No sessions.\n");
    // stats and export take the same list.
    const stats = JSON.parse(readOnly(["stats", "--json", "--source", "cli,cron"]).stdout) as {
      sessions: number;
    };
    expect(stats.sessions).toBe(comma.length);
    const bySource = JSON.parse(
      readOnly(["stats", "--json", "--by", "source", "-s", "cli", "-s", "cron"]).stdout,
    ) as Array<{
      group: string;
    }>;
    expect(bySource.map((r) => r.group)).toEqual(["cli", "cron"]);
    const exported = readOnly(["export", "--source", "cli,cron"]).stdout.trimEnd().split("\n").slice(1);
    expect(
      exported
        .map((l) => {
          const s = JSON.parse(l) as Row;
          return `${s.source}:${s.id}`;
        })
        .sort(),
    ).toEqual(comma);
  });

  it("list, search and stats print CSV and TSV: a header row, then the rows --json prints", () => {
    type Json = Record<string, unknown>;
    const same = (args: string[], key: string, fields: string[]) => {
      const json = JSON.parse(readOnly([...args, "--json"]).stdout) as Json[];
      for (const format of ["--csv", "--tsv"]) {
        const text = readOnly([...args, format]).stdout;
        const records = parse(text, {
          columns: true,
          delimiter: format === "--csv" ? "," : "\t",
          quote: format === "--csv" ? '"' : false,
        }) as Array<Record<string, string>>;
        expect(records.length, `${args.join(" ")} ${format}`).toBe(json.length);
        records.forEach((r, i) => {
          for (const f of fields) {
            const v = json[i]![f];
            expect(r[f], `${format} ${f}`).toBe(
              v === null || v === undefined
                ? ""
                : format === "--tsv"
                  ? String(v).replace(/[\t\r\n]+/g, " ")
                  : String(v),
            );
          }
          expect(r[key]).toBe(String(json[i]![key]));
        });
      }
    };
    same(["list", "--all", "--limit", "100"], "id", [
      "title",
      "source",
      "started_at",
      "message_count",
      "preview",
    ]);
    // (The snippet of a hit in a tool call is rendered as the call: see session-names.test.ts.)
    same(["search", "docker", "--limit", "50"], "id", ["session_id", "role", "title", "timestamp"]);
    same(["stats", "--by", "model"], "group", ["sessions", "messages", "input_tokens", "estimated_cost_usd"]);
  });

  it("started_at is the session's own start in every listing; a projected chain adds chain_started_at", () => {
    type Row = { id: string; started_at: number; chain_started_at?: number; _lineage_root_id?: string };
    const top = JSON.parse(readOnly(["list", "--json", "--limit", "100"]).stdout) as Row[];
    const all = new Map(
      (JSON.parse(readOnly(["list", "--json", "--all", "--limit", "100"]).stdout) as Row[]).map((r) => [
        r.id,
        r,
      ]),
    );
    for (const row of top) expect(row.started_at, row.id).toBe(all.get(row.id)!.started_at);
    const tip = top.find((r) => r.id === "20260101_093000_cli002")!;
    expect(tip._lineage_root_id).toBe("20260101_090000_cli001");
    expect(tip.chain_started_at).toBe(all.get("20260101_090000_cli001")!.started_at);
    expect(tip.chain_started_at).toBeLessThan(tip.started_at);
    expect(top.filter((r) => r.chain_started_at !== undefined).map((r) => r.id)).toEqual([
      "20260101_093000_cli002",
    ]);
  });

  it("a hit inside a tool call is rendered as show renders the call, not as escaped JSON", () => {
    const r = readOnly(["search", "docker", "--role", "assistant"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('    terminal({"cmd": ">>>docker<<< build ."})\n');
    expect(r.stdout).not.toContain('\\"');
    expect(readOnly(["show", "20260101_090000_cli001"]).stdout).toContain(
      '→ terminal({"cmd": "docker build ."})',
    );
  });

  it("show by id, by unique prefix and by title (latest of the lineage)", () => {
    const byId = readOnly(["show", "20260101_090000_cli001"]);
    expect(byId.code).toBe(0);
    expect(byId.stdout).toContain("Fix Docker Build  20260101_090000_cli001");
    expect(byId.stdout).toContain("── user");
    expect(byId.stdout).toContain("── tool terminal");
    expect(byId.stdout).toMatch(/→ terminal\(/);
    // Reasoning is folded to one line by default, shown with --reasoning.
    expect(byId.stdout).toMatch(/▸ reasoning \(\d+ words?, folded; --reasoning to expand\)/);
    const prefix = readOnly(["show", "20260102_12"]);
    expect(prefix.code).toBe(0);
    expect(prefix.stdout).toContain("记忆断裂 调查  20260102_120000_tg0001");
    expect(prefix.stdout).toContain("こんにちは世界");
    const byTitle = readOnly(["show", "Fix Docker Build"]);
    expect(byTitle.code).toBe(0);
    expect(byTitle.stdout).toContain("Fix Docker Build #2  20260101_093000_cli002");
    // The lineage, with the kind of each link.
    expect(byTitle.stdout).toContain("lineage 20260101_090000_cli001 'Fix Docker Build' ─compression→ this");
    expect(byId.stdout).toContain("children 20260101_093000_cli002 'Fix Docker Build #2' (compression)");
    expect(readOnly(["show", "20260104_100000_cli003"]).stdout).toContain(
      "children 20260104_100500_cli004 (branch)",
    );
  });

  it("show --reasoning expands what was folded", () => {
    const r = readOnly(["show", "20260101_090000_cli001", "--reasoning"]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("folded;");
    expect(r.stdout).toContain("│ ");
  });

  it("show --json and --markdown", () => {
    const json = JSON.parse(readOnly(["show", "20260101_090000_cli001", "--json"]).stdout) as {
      id: string;
      messages: Array<{ role: string; tool_calls: unknown }>;
    };
    expect(json.id).toBe("20260101_090000_cli001");
    expect(json.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(Array.isArray(json.messages[1]!.tool_calls)).toBe(true);
    const md = readOnly(["show", "Fix Docker Build #2", "--markdown"]);
    expect(md.code).toBe(0);
    expect(md.stdout).toMatch(/^# Fix Docker Build #2\n/);
    // The store's Markdown rendering (`sessionToMarkdown`), the same as `export --format md`.
    expect(md.stdout).toContain("| Session | `20260101_093000_cli002` |");
    expect(md.stdout).toMatch(/^## User · /m);
    expect(md.stdout).toMatch(/^## Assistant · /m);
    const both = readOnly(["show", "20260101_090000_cli001", "--json", "--markdown"]);
    expect(both.code).toBe(2);
  });

  it("search: >>> <<< markers when not a terminal, with title, source, time and context", () => {
    const r = readOnly(["search", "docker"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/>>>docker<<</i);
    expect(r.stdout).toContain("Fix Docker Build");
    expect(r.stdout).toMatch(/· cli ·/);
    expect(r.stdout).toMatch(/2026-01-01 \d\d:\d\d/);
    // Context lines: the neighbours of the hit, indented under it.
    expect(r.stdout).toMatch(/^ {6}(user|assistant|tool): /m);
    expect(r.stdout).not.toContain("\x1b[");
  });

  it("search --json, filters, CJK", () => {
    const hits = JSON.parse(readOnly(["search", "universal", "--json", "--limit", "50"]).stdout) as Array<{
      source: string;
      title: string | null;
      context: unknown[];
    }>;
    expect(hits.length).toBe(5);
    expect(hits[0]).toHaveProperty("title");
    const filtered = JSON.parse(
      readOnly(["search", "universal", "--json", "--source", "acp,cron", "--exclude-source", "cron"]).stdout,
    ) as Array<{ source: string }>;
    expect(filtered.map((h) => h.source)).toEqual(["acp"]);
    const roles = JSON.parse(readOnly(["search", "docker", "--json", "--role", "tool"]).stdout) as Array<{
      role: string;
    }>;
    expect(roles.every((h) => h.role === "tool")).toBe(true);
    const cjk = readOnly(["search", "记忆断裂"]);
    expect(cjk.code).toBe(0);
    expect(cjk.stdout).toContain("20260102_120000_tg0001");
    const none = readOnly(["search", "zzzyyyxxx"]);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain("No matches");
  });

  it("a 1–2 character CJK search finds by a scan, and changes nothing of the reference's", () => {
    // Reading commands open the file read-only (issue 21): the store's short-CJK index is
    // not built by `search`; a scan answers until a writable store has built it.
    const db = copyOfSample();
    const r = cliOn(db, ["search", "桂林", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const hits = JSON.parse(r.stdout) as Array<{ session_id: string }>;
    expect(hits.map((h) => h.session_id)).toEqual(["20260102_120000_tg0001"]);
    // Compared with another copy: opening the fixture itself in place would leave -wal/-shm
    // beside it in the repository.
    expect(referenceDump(db)).toBe(referenceDump(copyOfSample()));
  });

  it("export of one session and of all, in every format, to stdout", () => {
    const jsonl = readOnly(["export"]);
    expect(jsonl.code).toBe(0);
    const lines = jsonl.stdout.trimEnd().split("\n");
    const header = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(header).toHaveProperty("format");
    expect(header).toHaveProperty("version");
    expect(lines.length).toBe(1 + 13);
    const ids = lines.slice(1).map((l) => (JSON.parse(l) as { id: string }).id);
    expect(new Set(ids).size).toBe(13);
    const json = JSON.parse(
      readOnly(["export", "20260101_090000_cli001", "--format", "json"]).stdout,
    ) as Array<{
      id: string;
      messages: unknown[];
    }>;
    expect(json).toHaveLength(1);
    expect(json[0]!.id).toBe("20260101_090000_cli001");
    expect(json[0]!.messages).toHaveLength(4);
    const md = readOnly(["export", "Fix Docker Build", "--format", "md"]);
    expect(md.stdout).toMatch(/^# Fix Docker Build #2/);
    const bad = readOnly(["export", "--format", "xml"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/xml/);
  });

  it("stats: totals and --by source|model|day", () => {
    const total = readOnly(["stats", "--json"]);
    expect(total.stderr).toBe("");
    expect(total.code).toBe(0);
    const text = JSON.stringify(JSON.parse(total.stdout));
    expect(text).toMatch(/91200|1200/); // input tokens of the sample (1200 + 90000)
    for (const by of ["source", "model", "day"]) {
      const r = readOnly(["stats", "--by", by]);
      expect(r.code, r.stderr).toBe(0);
    }
    const bySource = readOnly(["stats", "--by", "source"]);
    for (const s of ["cli", "telegram", "discord", "cron"]) expect(bySource.stdout).toContain(s);
    expect(readOnly(["stats", "--by", "colour"]).code).toBe(2);
  });

  it("title prints the current title and --next the next of a lineage", () => {
    const r = readOnly(["title", "20260101_090000_cli001"]);
    expect(r.stdout).toBe("Fix Docker Build\n");
    const next = readOnly(["title", "--next", "Fix Docker Build"]);
    expect(next.stdout).toBe("Fix Docker Build #3\n");
    const fresh = readOnly(["title", "--next", "Brand new", "--json"]);
    expect(JSON.parse(fresh.stdout)).toEqual({ base: "Brand new", next: "Brand new" });
    // No title: nothing on stdout (for scripts), the hint on stderr.
    const untitled = readOnly(["title", "20260104_100500_cli004"]);
    expect(untitled.code).toBe(0);
    expect(untitled.stdout).toBe("");
    expect(untitled.stderr).toBe(
      "20260104_100500_cli004 has no title (set one: hermes-sessions title 20260104_100500_cli004 'New title')\n",
    );
    expect(JSON.parse(readOnly(["title", "20260104_100500_cli004", "--json"]).stdout)).toEqual({
      id: "20260104_100500_cli004",
      title: null,
    });
  });

  it("prune --dry-run lists and deletes nothing", () => {
    const r = readOnly(["prune", "--older-than", "1", "--dry-run", "--json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { pruned: number; sessions: Array<{ id: string }> };
    expect(out.pruned).toBe(0);
    // Ended sessions only (the sample's three ended ones are all older than a day).
    expect(out.sessions.map((s) => s.id).sort()).toEqual([
      "20260101_090000_cli001",
      "20260101_093000_cli002",
      "20260104_100000_cli003",
    ]);
  });

  it("doctor: all checks pass on the sample, and it changes nothing", () => {
    const r = readOnly(["doctor", "--json"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: Array<{ name: string; status: string }> };
    expect(report.ok).toBe(true);
    const names = report.checks.map((c) => c.name);
    expect(names).toContain("schema version");
    expect(names).toContain("integrity_check");
    expect(names.some((n) => n.includes("messages_fts_trigram"))).toBe(true);
    expect(names.some((n) => /search index .*messages_fts\b/.test(n))).toBe(true);
    expect(names).toContain("wal size");
    expect(names.some((n) => n.startsWith("permissions"))).toBe(true);
    const text = readOnly(["doctor"]);
    expect(text.stdout).toMatch(/ok\s+schema version\s+v11/);
  });
});
