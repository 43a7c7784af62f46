import { describe, expect, it } from "vitest";
import { cliOn, copyOfSample, fingerprint, oneErrorLine } from "./helpers/cli.js";

/** The sample's lineage: "Fix Docker Build" (cli001, the oldest) and "Fix Docker Build #2" (cli002). */
const ROOT = "20260101_090000_cli001";
const SECOND = "20260101_093000_cli002";

const titleOf = (db: string, id: string) =>
  (JSON.parse(cliOn(db, ["title", id, "--json"]).stdout) as { title: string | null }).title;

describe("delete and title act on the session the user named", { timeout: 120_000 }, () => {
  it("delete by a title removes the session titled exactly that, not the newest of its lineage", () => {
    const db = copyOfSample();
    const r = cliOn(db, ["delete", "Fix Docker Build", "--yes"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`Deleted ${ROOT}.\n`);
    expect(cliOn(db, ["show", ROOT, "--json"]).code).toBe(1);
    expect(titleOf(db, SECOND)).toBe("Fix Docker Build #2");
  });

  it("title by a title renames the session titled exactly that", () => {
    const db = copyOfSample();
    const r = cliOn(db, ["title", "Fix Docker Build", "Renamed"]);
    expect(r.code, r.stderr).toBe(0);
    expect(titleOf(db, ROOT)).toBe("Renamed");
    expect(titleOf(db, SECOND)).toBe("Fix Docker Build #2");
  });

  it("a name that only means a lineage is refused with its sessions listed, and nothing changes", () => {
    const db = copyOfSample();
    expect(cliOn(db, ["title", ROOT, "Other"]).code).toBe(0);
    const fork = JSON.parse(cliOn(db, ["fork", SECOND, "--json"]).stdout) as { id: string; title: string };
    expect(fork.title).toBe("Fix Docker Build #3");
    const before = fingerprint(db);
    for (const args of [
      ["delete", "Fix Docker Build", "--yes"],
      ["title", "Fix Docker Build", "Renamed"],
      ["title", "Fix Docker Build", "--clear"],
    ]) {
      const r = cliOn(db, args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stdout).toBe("");
      expect(oneErrorLine(r)).toBe(
        "error: No session is titled exactly 'Fix Docker Build', and it names a lineage of 2 sessions: " +
          `'Fix Docker Build #3' (${fork.id}), 'Fix Docker Build #2' (${SECOND}); ` +
          "give the id or the exact title of the one you mean",
      );
    }
    expect(fingerprint(db)).toBe(before);
    // Reading commands still resolve a title to the newest of its lineage.
    expect(JSON.parse(cliOn(db, ["show", "Fix Docker Build", "--json"]).stdout).id).toBe(fork.id);
  });

  it("--help of show, delete and title says how a name is resolved", () => {
    const db = copyOfSample();
    for (const command of ["show", "follow", "export", "fork"]) {
      expect(cliOn(db, [command, "--help"]).stdout, command).toContain(
        "a title: the newest session of its lineage",
      );
    }
    for (const command of ["delete", "title"]) {
      const help = cliOn(db, [command, "--help"]).stdout;
      expect(help, command).toContain("the session titled exactly that");
      expect(help, command).toContain("is never taken to mean");
    }
  });
});

describe("export with a file name where the session goes", { timeout: 60_000 }, () => {
  it("says to give the file with --out, and writes nothing", () => {
    const db = copyOfSample();
    const r = cliOn(db, ["export", "out.jsonl"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(oneErrorLine(r)).toBe(
      "error: No session matches 'out.jsonl'; to export every session to that file, give it with --out: " +
        "hermes-sessions export --out out.jsonl",
    );
    // A name that does not look like a file gets the usual suggestions only.
    expect(oneErrorLine(cliOn(db, ["export", "nope-nope"]))).toBe("error: No session matches 'nope-nope'");
  });
});
