import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_MAIN, cli, copyOfSample, tempDir } from "./helpers/cli.js";

/** A directory with a `hermes-sessions` on it that runs the built CLI, as an install would. */
function binDir(): string {
  const dir = tempDir("hermes-cli-bin-");
  const shim = join(dir, "hermes-sessions");
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${CLI_MAIN}" "$@"\n`);
  chmodSync(shim, 0o755);
  return dir;
}

const lines = (text: string) => text.split("\n").filter((l) => l !== "");

describe("shell completion", { timeout: 120_000 }, () => {
  it("__complete: commands, flags, flag values, sessions with titles, files", () => {
    const db = copyOfSample();
    const complete = (...words: string[]) => {
      const r = cli(["__complete", "--", ...words]);
      expect(r.code, r.stderr).toBe(0);
      return lines(r.stdout);
    };
    expect(complete("s").map((l) => l.split("\t")[0])).toEqual(["show", "search", "stats", "serve"]);
    expect(complete("serve", "--allow-")).toEqual([
      "--allow-writes\tenable rename, delete and prune in the UI (each confirmed)",
    ]);
    expect(complete("")).toContain(
      "follow\tprint new messages as they are written, like tail -f (Ctrl-C stops)",
    );
    expect(complete("").some((l) => l.startsWith("__complete"))).toBe(false);
    expect(complete("search", "docker", "--ro")).toEqual([
      "--role\tonly these roles (repeatable, comma-separated)",
    ]);
    expect(complete("search", "docker", "--role", "")).toEqual(["user", "assistant", "tool", "system"]);
    expect(complete("export", "--format", "j")).toEqual(["jsonl", "json"]);
    expect(complete("stats", "--by", "")).toEqual(["source", "model", "day"]);
    expect(complete("completion", "")).toEqual(["bash", "zsh", "fish"]);
    expect(complete("--db", db, "show", "20260101")).toEqual([
      "20260101_093000_cli002\tFix Docker Build #2",
      "20260101_090000_cli001\tFix Docker Build",
    ]);
    expect(complete("--db", db, "ls", "-")).toContain(
      "--exclude-source\tnot these sources (repeatable, comma-separated)",
    );
    for (const words of [
      ["import", ""],
      ["--db", ""],
      ["export", "--out", ""],
    ])
      expect(complete(...words)).toEqual([":files"]);
    expect(cli(["completion", "tcsh"]).code).toBe(2);
    expect(cli(["--help"]).stdout).not.toContain("__complete");
  });

  it("bash: the script completes commands, flags and session ids", () => {
    const db = copyOfSample();
    const bash = (line: string[]) => {
      const words = line.map((w) => `'${w}'`).join(" ");
      const script = `source <(hermes-sessions completion bash)
COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _hermes_sessions; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const r = spawnSync("bash", ["-c", script], {
        env: { ...process.env, PATH: `${binDir()}:${process.env.PATH}` },
        encoding: "utf8",
      });
      expect(r.status, r.stderr).toBe(0);
      return lines(r.stdout);
    };
    expect(bash(["hermes-sessions", "st"])).toEqual(["stats"]);
    expect(bash(["hermes-sessions", "search", "x", "--r"])).toEqual(["--role"]);
    expect(bash(["hermes-sessions", "--db", db, "show", "20260102"])).toEqual(["20260102_120000_tg0001"]);
  });

  it.runIf(existsSync("/usr/bin/fish"))("fish: the script completes with descriptions", () => {
    const db = copyOfSample();
    const script = join(tempDir(), "hermes-sessions.fish");
    writeFileSync(script, cli(["completion", "fish"]).stdout);
    const r = spawnSync(
      "fish",
      [
        "--no-config",
        "-c",
        `source ${script}; complete -C 'hermes-sessions --db ${db} show 20260102'; complete -C 'hermes-sessions fol'`,
      ],
      {
        env: { ...process.env, PATH: `${binDir()}:${process.env.PATH}` },
        encoding: "utf8",
      },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(lines(r.stdout)).toEqual([
      "20260102_120000_tg0001\t记忆断裂 调查",
      "follow\tprint new messages as they are written, like tail -f (Ctrl-C stops)",
    ]);
  });

  it.runIf(existsSync("/usr/bin/zsh"))("zsh: the script parses", () => {
    const script = join(tempDir(), "_hermes-sessions");
    writeFileSync(script, cli(["completion", "zsh"]).stdout);
    const r = spawnSync("zsh", ["-n", script], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(cli(["completion", "zsh"]).stdout).toMatch(/^#compdef hermes-sessions\n/);
  });
});
