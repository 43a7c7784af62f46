import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEMO_MAIN, tempDir } from "./helpers/cli.js";

describe("pnpm demo", { timeout: 300_000 }, () => {
  it("runs the guided tour on a throwaway HERMES_HOME, every step succeeding, and never touches ~/.hermes", () => {
    const home = tempDir("hermes-demo-home-");
    const r = spawnSync(process.execPath, [DEMO_MAIN], {
      env: {
        ...process.env,
        HOME: home,
        HERMES_HOME: join(home, "must-not-be-used"),
        TZ: "UTC",
        NO_COLOR: "1",
      },
      encoding: "utf8",
      timeout: 280_000,
    });
    expect(r.status, r.stderr).toBe(0);
    // The demo removes its folder at the end; write-commands.test.ts checks the message count
    // against the file.
    const backup = `${/HERMES_HOME=(\S+)/.exec(r.stdout)![1]}/backup.jsonl`;
    expect(r.stderr).toMatch(/^Exported 9 sessions with [1-9][\d,]* messages to /);
    expect(r.stderr.endsWith(` to ${backup}\n`)).toBe(true);
    const out = r.stdout;
    for (const command of [
      "$ hermes-sessions list",
      "$ hermes-sessions show 'Fix Docker build'",
      "$ hermes-sessions search docker --limit 3",
      "$ hermes-sessions search '桂林'",
      "$ hermes-sessions title --next 'Fix Docker build'",
      "$ hermes-sessions stats --by source",
      "$ hermes-sessions prune --older-than 7 --dry-run",
      "$ hermes-sessions doctor",
    ]) {
      expect(out).toContain(command);
    }
    // Each command's output follows it.
    expect(out).toMatch(
      /\$ hermes-sessions show 'Fix Docker build'\nFix Docker build #2 {2}\d{8}_\d{6}_d4e5f6/,
    );
    expect(out).toMatch(/\$ hermes-sessions title --next 'Fix Docker build'\nFix Docker build #3\n/);
    expect(out).toMatch(/>>>桂林<<</);
    expect(out).toContain("Tour complete. Try it");
    expect(out).not.toContain("exit code");
    // The temporary home is gone; the real one was never created.
    const used = /HERMES_HOME=(\S+)/.exec(out)![1]!;
    expect(used).not.toBe(join(home, "must-not-be-used"));
    expect(existsSync(used)).toBe(false);
    expect(existsSync(join(home, ".hermes"))).toBe(false);
    expect(existsSync(join(home, "must-not-be-used"))).toBe(false);
    expect(readdirSync(home)).toEqual([]);
  });
});
