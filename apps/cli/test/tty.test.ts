import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliInPty, cliOn, copyOfSample, fingerprint, tempDir } from "./helpers/cli.js";
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

  it("search highlights matches with ANSI reverse video instead of >>> <<<", () => {
    const db = copyOfSample();
    const r = cliInPty(["--db", db, "search", "docker"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\x1b\[1;7;33mdocker\x1b\[0m/i);
    expect(r.stdout).not.toContain(">>>");
    expect(r.stdout).toContain("Fix Docker Build");
    // CJK hits (substring snippets carry no markers): the query's terms are highlighted.
    const cjk = cliInPty(["--db", db, "search", "记忆断裂"]);
    expect(cjk.stdout).toContain("\x1b[1;7;33m记忆断裂\x1b[0m");
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

  it("export shows a progress bar on a terminal and writes the file", async () => {
    const db = await seededDb();
    const out = join(tempDir(), "all.jsonl");
    const r = cliInPty(["--db", db.path, "export", "--out", out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/exporting jsonl \[#+-*\] \d+% \d+\/8/);
    expect(r.stdout).toContain(`Exported 8 session(s) to ${out}`);
  });
});
