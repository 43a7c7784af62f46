import { describe, expect, it } from "vitest";
import { cliOn, copyOfSample, fingerprint } from "./helpers/cli.js";

/** The flags that select sessions, on every command that works on a set of them. */
const SELECTION_FLAGS = ["--source", "--exclude-source", "--model", "--since", "--until", "--title"];
const SELECTING = ["list", "search", "stats", "export", "prune"];

const ids = (stdout: string) => (JSON.parse(stdout) as Array<{ id: string }>).map((r) => r.id);

describe("selection flags: the same on every command that selects sessions", { timeout: 180_000 }, () => {
  it("list, search, stats, export and prune take the six flags, described alike, and say how they combine", () => {
    const db = copyOfSample();
    const described = new Map<string, Set<string>>();
    for (const command of SELECTING) {
      const help = cliOn(db, [command, "--help"]).stdout;
      for (const flag of SELECTION_FLAGS) {
        const line = help.split("\n").find((l) => new RegExp(`^\\s+(-\\w, )?${flag} <`).test(l));
        expect(line, `${command} ${flag}`).toBeDefined();
        described.set(
          flag,
          (described.get(flag) ?? new Set()).add(line!.replace(/^\s*(-\w, )?\S+ <\w+>\s+/, "")),
        );
      }
      expect(help, command).toContain(
        "Selecting sessions (the same flags on list, search, stats, export and prune",
      );
    }
    for (const [flag, texts] of described) expect([...texts], flag).toHaveLength(1);
  });

  it("list --since/--until select by start time (until: before it), --model and --title too", () => {
    const db = copyOfSample();
    const list = (...args: string[]) =>
      ids(cliOn(db, ["list", "--all", "--json", "--limit", "100", ...args]).stdout);
    expect(list("--since", "2026-01-01T01:00Z", "--until", "2026-01-01T04:00Z")).toEqual([
      "20260103_080000_dc0001",
      "20260102_120000_tg0001",
      "20260101_093000_cli002",
    ]);
    expect(list("--until", "2026-01-01T01:00Z")).toEqual(["20260101_090000_cli001"]);
    expect(list("--model", "openai/gpt-5.4")).toEqual(["20260103_080000_dc0001", "20260102_120000_tg0001"]);
    expect(list("--title", "fix docker")).toEqual(["20260101_093000_cli002", "20260101_090000_cli001"]);
    expect(list("--title", "20260104")).toEqual(["20260104_100500_cli004", "20260104_100000_cli003"]);
    expect(list("--model", "anthropic/claude-sonnet-4.6,openai/gpt-5.4", "--source", "cli")).toEqual([
      "20260101_093000_cli002",
      "20260101_090000_cli001",
    ]);
    const bad = cliOn(db, ["list", "--until", "soon"]);
    expect(bad.code).toBe(2);
  });

  it("search, stats, export and prune keep to the selected sessions, and change nothing with --dry-run", () => {
    const db = copyOfSample();
    const before = fingerprint(db);
    const hits = (...args: string[]) =>
      (
        JSON.parse(cliOn(db, ["search", ...args, "--json", "--limit", "100"]).stdout) as Array<{
          session_id: string;
        }>
      ).map((h) => h.session_id);
    const all = hits("the");
    expect(new Set(all).size).toBeGreaterThan(2);
    const byModel = hits("the", "--model", "openai/gpt-5.4");
    expect(byModel.length).toBeGreaterThan(0);
    expect(new Set(byModel)).toEqual(
      new Set(["20260103_080000_dc0001", "20260102_120000_tg0001"].filter((id) => all.includes(id))),
    );
    expect(
      hits("docker", "--until", "2026-01-01T00:30Z").every((id) => id === "20260101_090000_cli001"),
    ).toBe(true);
    expect(hits("docker", "--title", "#2").every((id) => id === "20260101_093000_cli002")).toBe(true);
    // Paging over the selected hits: the second hit alone is the second of the first two.
    const two = hits("the", "--model", "openai/gpt-5.4").slice(0, 2);
    const second = JSON.parse(
      cliOn(db, ["search", "the", "--model", "openai/gpt-5.4", "--json", "--limit", "1", "--offset", "1"])
        .stdout,
    ) as Array<{ session_id: string; id: number }>;
    expect(second.map((h) => h.session_id)).toEqual([two[1]]);

    const stats = JSON.parse(cliOn(db, ["stats", "--model", "anthropic/claude-sonnet-4.6", "--json"]).stdout);
    expect(stats).toMatchObject({ sessions: 2, messages: 6, input_tokens: 1200, estimated_cost_usd: 0.0123 });
    const byDay = JSON.parse(cliOn(db, ["stats", "--title", "fix docker", "--by", "day", "--json"]).stdout);
    expect(byDay).toEqual([expect.objectContaining({ group: "2026-01-01", sessions: 2 })]);

    const exported = cliOn(db, ["export", "--until", "2026-01-01T02:00Z"]).stdout.trim().split("\n").slice(1);
    expect(exported.map((l) => (JSON.parse(l) as { id: string }).id).sort()).toEqual([
      "20260101_090000_cli001",
      "20260101_093000_cli002",
    ]);
    const prune = JSON.parse(
      cliOn(db, ["prune", "--older-than", "1", "--title", "fix docker", "--dry-run", "--json"]).stdout,
    ) as { sessions: Array<{ id: string }> };
    expect(prune.sessions.map((s) => s.id)).toEqual(["20260101_090000_cli001", "20260101_093000_cli002"]);
    expect(fingerprint(db)).toBe(before);
    // Without --dry-run, only the selected sessions go.
    const pruned = cliOn(db, ["prune", "--older-than", "1", "--title", "20260104", "--json"]);
    expect(JSON.parse(pruned.stdout)).toMatchObject({ pruned: 1 });
    expect(
      ids(cliOn(db, ["list", "--all", "--json", "--limit", "100", "--title", "20260104"]).stdout),
    ).toEqual(["20260104_100500_cli004"]);
  });
});
