import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import Database from "better-sqlite3";
import stringWidth from "string-width";
import { describe, expect, it } from "vitest";
import { cliInPty, cliOn, copyOfSample, fingerprint, tempDir } from "./helpers/cli.js";
import { jsonlCounts, messagesText } from "./helpers/jsonl-counts.js";
import { seededDb } from "./helpers/seed.js";

// Rendering for a person: the CLI runs inside a pseudo-terminal (util-linux `script`), so its
// stdout is a TTY, as in a user's shell.
describe("on a terminal", { timeout: 240_000 }, () => {
  it("show colours roles and folds reasoning", () => {
    const db = copyOfSample();
    const before = fingerprint(db);
    const r = cliInPty(["--db", db, "show", "20260101_090000_cli001"]);
    expect(r.code).toBe(0);
    const out = r.stdout;
    // Role rules in colour: user green (32), assistant cyan (36), tool yellow (33).
    expect(out).toMatch(/\x1b\[32m\x1b\[1m── user/);
    expect(out).toMatch(/\x1b\[36m\x1b\[1m── assistant/);
    expect(out).toMatch(/\x1b\[33m\x1b\[1m── tool terminal/);
    expect(out).toMatch(/\x1b\[2m {2}▸ reasoning \(\d+ words?, folded; --reasoning to expand\)\x1b\[22m/);
    expect(out).toContain("Fix Docker Build");
    // The same command piped: no escapes at all.
    const piped = cliOn(db, ["show", "20260101_090000_cli001"]);
    expect(piped.stdout).not.toContain("\x1b[");
    // NO_COLOR and --no-color turn colour off on a terminal too.
    expect(
      cliInPty(["--db", db, "show", "20260101_090000_cli001"], "", { NO_COLOR: "1" }).stdout,
    ).not.toContain("\x1b[");
    expect(cliInPty(["--db", db, "--no-color", "show", "20260101_090000_cli001"]).stdout).not.toContain(
      "\x1b[",
    );
    expect(fingerprint(db)).toBe(before);
  });

  it("show pages long output through $PAGER on a terminal, not when piped or with --no-pager", () => {
    const db = copyOfSample();
    const dir = tempDir();
    const paged = join(dir, "paged.txt");
    const pager = { PAGER: `cat > '${paged}'` };
    const r = cliInPty(["--db", db, "show", "20260101_090000_cli001"], "", pager);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    const text = readFileSync(paged, "utf8");
    expect(text).toContain("Fix Docker Build");
    expect(text).toMatch(/\x1b\[32m\x1b\[1m── user/); // colours go through to the pager
    expect(cliInPty(["--db", db, "show", "20260101_090000_cli001", "--markdown"], "", pager).stdout).toBe("");
    expect(readFileSync(paged, "utf8")).toMatch(/^# Fix Docker Build\n/);
    rmSync(paged);
    const direct = cliInPty(["--db", db, "show", "20260101_090000_cli001", "--no-pager"], "", pager);
    expect(direct.stdout).toContain("Fix Docker Build");
    expect(cliOn(db, ["show", "20260101_090000_cli001"], { env: pager }).stdout).toContain(
      "Fix Docker Build",
    );
    expect(existsSync(paged)).toBe(false);
  });

  it("search highlights matches with ANSI reverse video instead of >>> <<<", () => {
    const db = copyOfSample();
    const r = cliInPty(["--db", db, "search", "docker"]);
    expect(r.code).toBe(0);
    // Bold, reverse video, yellow (util.styleText), each closed after the match.
    expect(r.stdout).toMatch(/\x1b\[1m\x1b\[7m\x1b\[33mdocker\x1b\[39m\x1b\[27m\x1b\[22m/i);
    expect(r.stdout).not.toContain(">>>");
    expect(r.stdout).toContain("Fix Docker Build");
    // CJK hits (substring snippets carry no markers): the query's terms are highlighted.
    const cjk = cliInPty(["--db", db, "search", "记忆断裂"]);
    expect(cjk.stdout).toContain("\x1b[1m\x1b[7m\x1b[33m记忆断裂\x1b[39m\x1b[27m\x1b[22m");
    const piped = cliOn(db, ["search", "记忆断裂"]);
    expect(piped.stdout).toContain(">>>记忆断裂<<<");
  });

  it("list aligns CJK titles by display width", () => {
    const db = copyOfSample();
    const r = cliInPty(["--db", db, "list"]);
    const lines = r.stdout.split("\r\n");
    const header = lines.find((l) => l.includes("SOURCE"))!;
    const cjk = lines.find((l) => l.includes("记忆断裂"))!;
    const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");
    const width = (s: string) => [...s].reduce((w, ch) => w + (/[\u3000-\u9fff]/.test(ch) ? 2 : 1), 0);
    const col = (line: string, word: string) => width(strip(line).slice(0, strip(line).indexOf(word)));
    expect(col(cjk, "telegram")).toBe(col(header, "SOURCE"));
  });

  it("tables fit the terminal's width: cells cut with …, nothing wraps, emoji and CJK two columns each", async () => {
    const db = await seededDb();
    const sqlite = new Database(db.path);
    sqlite
      .prepare("UPDATE sessions SET title = ? WHERE id = ?")
      .run("🚀 launch ✅ done ☕ then a long tail of words", db.ids.telegram);
    sqlite.prepare("UPDATE sessions SET title = ? WHERE id = ?").run("👍🏽 记忆断裂 调查", db.ids.discord);
    sqlite.close();
    const strip = (s: string) => stripVTControlCharacters(s);
    const at = (line: string, text: string) => stringWidth(line.slice(0, line.indexOf(text)));
    const sessions = (JSON.parse(cliOn(db.path, ["list", "--json"]).stdout) as unknown[]).length;
    for (const columns of [100, 80, 60]) {
      const r = cliInPty(["--db", db.path, "list"], "", {}, { columns });
      expect(r.code).toBe(0);
      const lines = strip(r.stdout)
        .split("\r\n")
        .filter((l) => l !== "");
      expect(lines.length).toBe(1 + sessions); // the header and a line a session: nothing wrapped
      for (const l of lines) expect(stringWidth(l), `${columns}: ${l}`).toBeLessThanOrEqual(columns);
      const header = lines[0]!;
      const rocket = lines.find((l) => l.includes("🚀"))!;
      expect(rocket).toMatch(/🚀 launch ✅ done ☕ .*…/);
      // The column after the title starts where its header does, counted in display columns.
      const next = header.match(/TITLE\s+(\S+)/)![1]!;
      const thumbs = lines.find((l) => l.includes("👍🏽"))!;
      for (const [row, titleEnd] of [
        [rocket, "…"],
        [thumbs, "调查"],
      ] as const) {
        const from = row.indexOf(titleEnd) + titleEnd.length;
        const after = row.slice(from).trimStart().split(/\s+/)[0]!;
        const start = stringWidth(row.slice(0, row.indexOf(after, from)));
        // MSGS is right-aligned: its cells end where the header ends.
        if (next === "MSGS") expect(start + stringWidth(after)).toBe(at(header, next) + 4);
        else expect(start, `${columns}: ${row}`).toBe(at(header, next));
      }
    }
    // Piped, without $COLUMNS: whole cells (up to each column's own cap), for scripts.
    const piped = cliOn(db.path, ["list"]).stdout;
    expect(piped).toContain("🚀 launch ✅ done ☕ then a l…  telegram");
    expect(Math.max(...piped.split("\n").map((l) => stringWidth(l)))).toBeGreaterThan(100);
  });

  it("export shows a progress bar on a terminal and writes the file", async () => {
    const db = await seededDb();
    const out = join(tempDir(), "all.jsonl");
    const r = cliInPty(["--db", db.path, "export", "--out", out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/exporting jsonl \[#+-*\] \d+% \d+\/8/);
    expect(jsonlCounts(out).sessions).toBe(8);
    expect(r.stdout).toContain(
      `Exported 8 sessions with ${messagesText(jsonlCounts(out).messages)} to ${out}`,
    );
  });
});
