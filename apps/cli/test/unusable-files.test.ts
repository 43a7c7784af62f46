import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { cliOn, fingerprint, oneErrorLine, SAMPLE_DB, tempDir } from "./helpers/cli.js";

/** Files no command can use, each in a folder of its own, as a user might point --db at them. */
function unusableFiles(): Record<string, string> {
  const at = (name: string) => join(tempDir(), name);
  const foreign = at("notes.db");
  const db = new Database(foreign);
  db.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hello')");
  db.close();
  const empty = at("state.db");
  writeFileSync(empty, "");
  const garbage = at("state.db");
  writeFileSync(garbage, "these are not the sessions you are looking for\n".repeat(200));
  // SQLite's header, then pages overwritten: SQLite opens it and fails on reading.
  const damaged = at("state.db");
  const bytes = readFileSync(SAMPLE_DB);
  bytes.fill(0xff, 100, 3100);
  writeFileSync(damaged, bytes);
  return { foreign, empty, garbage, damaged };
}

/** What every command must say about each kind of file. */
const EXPECTED: Record<string, RegExp> = {
  foreign:
    /is a SQLite database but not a Hermes state\.db \(no sessions table\); nothing was changed\. Point --db \(or HERMES_HOME\) at the agent's state\.db$/,
  empty:
    /is empty \(0 bytes\): it holds no sessions and nothing was changed\. If it held your sessions, restore it from a backup; else delete it/,
  garbage:
    /is not a SQLite database \(it does not start with SQLite's header\); nothing was changed\. If it held your sessions, restore it from a backup$/,
  damaged:
    /is a damaged SQLite database \(database disk image is malformed\); nothing was changed\. If it held your sessions, restore it from a backup$/,
};

describe("a file no command can use: every command says the same true thing", { timeout: 180_000 }, () => {
  it("list, search, doctor and migrate give one line, with no advice to run another command, and change nothing", () => {
    for (const [kind, path] of Object.entries(unusableFiles())) {
      const before = fingerprint(path);
      const listing = readdirSync(join(path, ".."));
      const said = new Set<string>();
      for (const args of [["list"], ["search", "docker"], ["doctor"], ["migrate"], ["title", "x", "y"]]) {
        const r = cliOn(path, args);
        expect(r.code, `${kind}: ${args.join(" ")}`).toBe(1);
        // doctor lists its checks on stdout when it can open the file; the verdict is the same line.
        const line =
          r.stderr === ""
            ? (r.stdout.split("\n").find((l) => l.includes("FAIL")) ?? "").replace(
                /^\s*FAIL\s+\S+ \S+\s+/,
                "",
              )
            : oneErrorLine(r).replace(/^error: /, "");
        expect(line, `${kind}: ${args.join(" ")}`).toMatch(EXPECTED[kind]!);
        expect(line).not.toMatch(/run 'hermes-sessions (doctor|migrate)'/);
        said.add(line);
      }
      expect([...said], kind).toHaveLength(1);
      expect(fingerprint(path), kind).toBe(before);
      expect(readdirSync(join(path, "..")), kind).toEqual(listing);
    }
  });
});
