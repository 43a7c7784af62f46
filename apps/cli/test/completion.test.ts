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

describe("completion of titles and of option values", { timeout: 120_000 }, () => {
  const env = () => ({ ...process.env, PATH: `${binDir()}:${process.env.PATH}` });

  it("__complete: titles where a session goes (ids first), the database's sources, comma lists", () => {
    const db = copyOfSample();
    const complete = (...words: string[]) => lines(cli(["__complete", "--", "--db", db, ...words]).stdout);
    expect(complete("delete", "Fix")).toEqual([
      "Fix Docker Build #2\t20260101_093000_cli002",
      "Fix Docker Build\t20260101_090000_cli001",
    ]);
    // As the shells pass a word being typed: quoted, or with escaped spaces.
    expect(complete("show", "'fix docker build #")).toEqual(["Fix Docker Build #2\t20260101_093000_cli002"]);
    expect(complete("title", "Fix\\ Docker\\ Build\\ #")).toEqual([
      "Fix Docker Build #2\t20260101_093000_cli002",
    ]);
    expect(complete("show", "记忆")).toEqual(["记忆断裂 调查\t20260102_120000_tg0001"]);
    expect(complete("list", "--source", "")).toEqual([
      "acp",
      "cli",
      "cron",
      "discord",
      "homeassistant",
      "matrix",
      "signal",
      "telegram",
    ]);
    expect(complete("search", "x", "--exclude-source", "cli,c")).toEqual(["cli,cron"]);
    expect(complete("search", "x", "--role", "user,")).toEqual([
      "user,assistant",
      "user,tool",
      "user,system",
    ]);
    expect(complete("export", "--format", "")).toEqual(["jsonl", "json", "md"]);
  });

  it("bash: a title goes in as one quoted word; --source, --role and --format values", () => {
    const db = copyOfSample();
    const bash = (line: string[]) => {
      const words = line.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(" ");
      const script = `source <(hermes-sessions completion bash)
COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _hermes_sessions; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const r = spawnSync("bash", ["-c", script], { env: env(), encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      return lines(r.stdout);
    };
    expect(bash(["hermes-sessions", "--db", db, "delete", "Fix\\ Docker\\ Build\\ #"])).toEqual([
      "Fix\\ Docker\\ Build\\ #2",
    ]);
    expect(bash(["hermes-sessions", "--db", db, "list", "--source", "te"])).toEqual(["telegram"]);
    expect(bash(["hermes-sessions", "search", "x", "--role", "t"])).toEqual(["tool"]);
    expect(bash(["hermes-sessions", "export", "--format", "m"])).toEqual(["md"]);
  });

  it("zsh: the completion function offers titles and values, with descriptions", () => {
    const db = copyOfSample();
    const script = join(tempDir(), "_hermes-sessions");
    writeFileSync(script, cli(["completion", "zsh"]).stdout);
    // The function runs in zsh as written; compdef and _describe (of the completion system,
    // which needs a terminal) are stood in for by ones that print what they were given.
    const zsh = (words: string[]) => {
      const quoted = words.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(" ");
      const r = spawnSync(
        "zsh",
        [
          "-f",
          "-c",
          `compdef() { :; }; _files() { print FILES; }; _describe() { print -rl -- "\${(@P)2}"; }
source ${script}; words=(${quoted}); CURRENT=${words.length}; _hermes_sessions`,
        ],
        { env: env(), encoding: "utf8" },
      );
      expect(r.status, r.stderr).toBe(0);
      return lines(r.stdout);
    };
    expect(zsh(["hermes-sessions", "--db", db, "show", "Fix"])).toEqual([
      "Fix Docker Build #2:20260101_093000_cli002",
      "Fix Docker Build:20260101_090000_cli001",
    ]);
    expect(zsh(["hermes-sessions", "--db", db, "stats", "--source", "d"])).toEqual(["discord"]);
    expect(zsh(["hermes-sessions", "search", "x", "--role", "a"])).toEqual(["assistant"]);
    expect(zsh(["hermes-sessions", "export", "--format", "j"])).toEqual(["jsonl", "json"]);
    expect(zsh(["hermes-sessions", "import", ""])).toEqual(["FILES"]);
  });

  it("fish: titles and values complete, with descriptions", () => {
    const db = copyOfSample();
    const script = join(tempDir(), "hermes-sessions.fish");
    writeFileSync(script, cli(["completion", "fish"]).stdout);
    const fish = (line: string) => {
      const r = spawnSync(
        "fish",
        ["--no-config", "-c", `source ${script}; complete -C ${JSON.stringify(line)}`],
        { env: env(), encoding: "utf8" },
      );
      expect(r.status, r.stderr).toBe(0);
      return lines(r.stdout);
    };
    expect(fish(`hermes-sessions --db ${db} delete 'Fix Docker Build #`)).toEqual([
      "Fix Docker Build #2\t20260101_093000_cli002",
    ]);
    expect(fish(`hermes-sessions --db ${db} list --source cr`)).toEqual(["cron"]);
    expect(fish("hermes-sessions search x --role sy")).toEqual(["system"]);
    expect(fish("hermes-sessions export --format md")).toEqual(["md"]);
  });
});
