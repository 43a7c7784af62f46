import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_MAIN, cli, cliOn, copyOfSample, fingerprint, oneErrorLine, tempDir } from "./helpers/cli.js";

describe("errors: one line on stderr, a non-zero exit code", { timeout: 240_000 }, () => {
  it("an unknown session suggests the closest ids and titles, for every command that takes one", () => {
    const db = copyOfSample();
    const before = fingerprint(db);
    const typo = cliOn(db, ["show", "Fix Docker Bild"]);
    expect(typo.code).toBe(1);
    expect(typo.stdout).toBe("");
    expect(oneErrorLine(typo)).toMatch(
      /^error: No session matches 'Fix Docker Bild'; did you mean 'Fix Docker Build/,
    );
    // An ambiguous prefix lists the ids it matches.
    const ambiguous = cliOn(db, ["show", "20260104"]);
    expect(ambiguous.code).toBe(1);
    expect(oneErrorLine(ambiguous)).toMatch(
      /did you mean 20260104_100[05]00_cli00[34], 20260104_100[05]00_cli00[34]\?$/,
    );
    for (const args of [
      ["export", "nope-nope"],
      ["fork", "nope-nope"],
      ["delete", "nope-nope", "--yes"],
      ["title", "nope-nope", "x"],
      ["show", "nope-nope"],
    ]) {
      const r = cliOn(db, args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(oneErrorLine(r)).toMatch(/^error: No session matches 'nope-nope'/);
    }
    expect(fingerprint(db)).toBe(before);
  });

  it("an ambiguous prefix says it is ambiguous and lists candidates, newest first", () => {
    const db = copyOfSample();
    const r = cliOn(db, ["show", "2026"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(oneErrorLine(r)).toBe(
      "error: '2026' is ambiguous: 13 sessions start with it (give more of the id); did you mean " +
        "20260106_000000_cron, 20260106_000000_homeassistant, 20260106_000000_matrix, " +
        "20260106_000000_signal, 20260106_000000_acp (+8 more)?",
    );
    for (const args of [
      ["export", "2026"],
      ["title", "2026"],
      ["fork", "2026"],
      ["delete", "2026", "--yes"],
    ]) {
      expect(oneErrorLine(cliOn(db, args)), args.join(" ")).toMatch(
        /^error: '2026' is ambiguous: 13 sessions/,
      );
    }
  });

  it("a search that only excludes is a usage error that says why; one that excludes never returns the excluded", () => {
    const db = copyOfSample();
    for (const q of ["NOT docker", "NOT 记忆断裂", "deploy OR NOT docker"]) {
      const r = cliOn(db, ["search", q]);
      expect(r.code, q).toBe(2);
      expect(oneErrorLine(r)).toBe(
        `error: The search query '${q}' only excludes: a NOT needs words to find before it ` +
          "(e.g. 'deploy NOT docker'; 'a OR NOT b' cannot be searched)",
      );
    }
    const hits = (q: string) =>
      (JSON.parse(cliOn(db, ["search", q, "--json", "--limit", "100"]).stdout) as Array<{ id: number }>).map(
        (h) => h.id,
      );
    const docker = hits("docker");
    const build = hits("build");
    expect(docker.length).toBeGreaterThan(0);
    const without = hits("NOT docker build");
    expect(without.length).toBeGreaterThan(0);
    expect(without.filter((id) => docker.includes(id))).toEqual([]);
    expect(without.every((id) => build.includes(id))).toBe(true);
  });

  it("bad flags, bad values and unknown commands are usage errors (exit 2)", () => {
    const db = copyOfSample();
    for (const args of [
      ["list", "--bogus"],
      ["list", "--limit", "-1"],
      ["list", "--limit", "ten"],
      ["search", "x", "--offset", "1.5"],
      ["lst"],
      ["stats", "--by", "week"],
      ["export", "--format", "xml"],
      ["show"],
      ["search"],
      ["export", "--since", "not a date"],
      ["search", "docker", "--role", "bogus"],
      ["search", "docker", "--role", "user,bogus"],
      ["search", "docker", "-r", ""],
      ["list", "--json", "--csv"],
      ["stats", "--tsv", "--json"],
    ]) {
      const r = cliOn(db, args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(oneErrorLine(r)).toMatch(/^error: /);
    }
    expect(oneErrorLine(cliOn(db, ["lst"]))).toMatch(/Did you mean .*list/);
  });

  it("a missing database says where it looked and is not created", () => {
    const dir = tempDir();
    const path = join(dir, "missing.db");
    for (const args of [
      ["list"],
      ["show", "x"],
      ["search", "x"],
      ["stats"],
      ["doctor"],
      ["migrate"],
      ["export"],
    ]) {
      const r = cliOn(path, args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(oneErrorLine(r)).toBe(`error: No database at ${path} (looked there because of --db)`);
    }
    const home = join(dir, "home");
    const viaHome = cli(["list"], { env: { HERMES_HOME: home } });
    expect(viaHome.code).toBe(1);
    expect(oneErrorLine(viaHome)).toBe(
      `error: No database at ${join(home, "state.db")} (looked there because of $HERMES_HOME)`,
    );
    expect(existsSync(path)).toBe(false);
    expect(existsSync(home)).toBe(false);
  });

  it("a file that is not a database fails in one line and is left as it was", () => {
    const dir = tempDir();
    const path = join(dir, "notes.txt");
    writeFileSync(path, "these are not the sessions you are looking for\n".repeat(200));
    const before = fingerprint(path);
    for (const args of [["list"], ["doctor"], ["migrate"]]) {
      const r = cliOn(path, args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(oneErrorLine(r)).toBe(
        `error: ${path} is not a SQLite database (it does not start with SQLite's header); ` +
          "nothing was changed. If it held your sessions, restore it from a backup",
      );
    }
    expect(fingerprint(path)).toBe(before);
  });

  it("--debug adds the stack trace", () => {
    const db = copyOfSample();
    const plain = cliOn(db, ["show", "nope-nope"]);
    expect(plain.stderr.split("\n").filter(Boolean)).toHaveLength(1);
    const debug = cliOn(db, ["--debug", "show", "nope-nope"]);
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/^error: No session matches/);
    expect(debug.stderr).toMatch(/\n\s+at .*resolve-session\.js/);
  });

  it("--help and --version exit 0", () => {
    const help = cli(["--help"]);
    expect(help.code).toBe(0);
    for (const c of [
      "list",
      "show",
      "search",
      "export",
      "import",
      "fork",
      "title",
      "prune",
      "delete",
      "stats",
      "doctor",
      "migrate",
    ]) {
      expect(help.stdout).toContain(c);
    }
    expect(cli(["search", "--help"]).stdout).toContain("--exclude-source");
    const version = cli(["--version"]);
    expect(version.code).toBe(0);
    const pkg = JSON.parse(readFileSync(join(dirname(CLI_MAIN), "..", "package.json"), "utf8")) as {
      version: string;
    };
    expect(version.stdout).toBe(`${pkg.version}\n`);
    expect(pkg.version).not.toBe("0.0.0");
  });
});
