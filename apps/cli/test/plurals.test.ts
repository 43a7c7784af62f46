import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { countOf, wordFor } from "../dist/render/plural.js";
import { cliInPty, cliOn, tempDir } from "./helpers/cli.js";

/** One JSONL export of a single session with a single message, started long ago. */
function oneSessionFile(dir: string): string {
  const file = join(dir, "one.jsonl");
  const session = {
    id: "20200101_000000_one",
    source: "cli",
    started_at: 1_577_836_800,
    ended_at: 1_577_836_900,
    end_reason: "done",
    title: "Only one",
    messages: [{ role: "user", content: "hello", timestamp: 1_577_836_810 }],
  };
  writeFileSync(file, `{"format":"hermes-sessions","version":1}\n${JSON.stringify(session)}\n`);
  return file;
}

describe("messages agree in number with their counts", { timeout: 120_000 }, () => {
  it("countOf and wordFor follow the English plural rules", () => {
    expect(countOf(1, "session")).toBe("1 session");
    expect(countOf(0, "session")).toBe("0 sessions");
    expect(countOf(1204, "message")).toBe("1,204 messages");
    expect(countOf(2, "match")).toBe("2 matches");
    expect(wordFor(1, "day")).toBe("day");
    expect(wordFor(1.5, "day")).toBe("days");
  });

  it("import, export, prune and delete say '1 session', '1 message', '1 day'", () => {
    const dir = tempDir();
    const db = join(dir, "state.db");
    const imported = cliOn(db, ["import", oneSessionFile(dir)]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/^Imported 1 session with 1 message; 0 already present and unchanged\./);
    const out = join(dir, "out.jsonl");
    expect(cliOn(db, ["export", "--out", out]).stderr).toBe(`Exported 1 session with 1 message to ${out}\n`);
    expect(cliOn(db, ["prune", "--older-than", "1", "--dry-run"]).stdout).toMatch(
      /Would delete 1 ended session started more than 1 day ago \(dry run\)\.\n$/,
    );
    const fork = cliOn(db, ["fork", "20200101_000000_one"]);
    expect(fork.stdout).toMatch(/'Only one #2' \(1 message\)\n$/);
    const asked = cliInPty(["--db", db, "delete", "20200101_000000_one"], "n\r");
    expect(asked.stdout).toContain("Delete session 20200101_000000_one 'Only one' and its 1 message?");
    expect(asked.stdout).not.toContain("(s)");
  });
});

describe("the CLI's sources", () => {
  it("word no count with '(s)': every count goes through countOf", () => {
    const src = resolve(dirname(fileURLToPath(import.meta.url)), "../src");
    const files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    const offenders = files.flatMap((f) =>
      readFileSync(join(src, f), "utf8")
        .split("\n")
        .map((line, i) => `${f}:${i + 1}: ${line.trim()}`)
        .filter((l) => /\b(session|message|check|day|warning|change|step)\(s\)/.test(l)),
    );
    expect(offenders).toEqual([]);
  });
});
