import { formatUsd, renderToolCallSnippet } from "@hermes/core";
import Database from "better-sqlite3";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { cliOn, copyOfSample } from "./helpers/cli.js";

// Issue 43: the CLI names sessions by the one rule of @hermes/core (`sessionDisplayName`),
// renders a hit inside a tool call as the call in every output but JSON, and writes money one way.
describe("names, tool-call hits and money in the CLI", { timeout: 120_000 }, () => {
  const db = () => copyOfSample();

  it("list names a chain after its first session, an untitled session by its first message", () => {
    const r = cliOn(db(), ["list"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^20260101_093000_cli002\s+Fix Docker Build\s{2}/m);
    expect(r.stdout).not.toContain("Fix Docker Build #2");
    // Untitled: the name is the preview, and the PREVIEW column does not repeat it.
    const dc = r.stdout.split("\n").find((l) => l.startsWith("20260103_080000_dc0001"));
    expect(dc).toMatch(/^20260103_080000_dc0001\s+Step 0: check the chat-send c…\s+discord\s/);
    expect(dc).toMatch(/\s90$/);
  });

  it("search and show name an untitled session by its first message, its id once beside it", () => {
    const hit = cliOn(db(), ["search", "chat-send", "--limit", "1"]);
    expect(hit.code, hit.stderr).toBe(0);
    expect(hit.stdout.split("\n")[0]).toBe(
      "[1] Step 0: check the chat-send command and P2.0 config for depl... 20260103_080000_dc0001 · discord · 2026-01-01 03:00 · user",
    );
    const show = cliOn(db(), ["show", "20260103_080000_dc0001", "--no-pager"]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout.split("\n")[0]).toBe(
      "Step 0: check the chat-send command and P2.0 config for depl...  20260103_080000_dc0001",
    );
  });

  it("search --csv and --tsv show a hit inside a tool call as the call, the match marked", () => {
    const file = db();
    const json = JSON.parse(
      cliOn(file, ["search", "docker", "--role", "assistant", "--json"]).stdout,
    ) as Array<{
      id: number;
      snippet: string;
    }>;
    const inCall = json.find((h) => h.snippet.includes('"function"'));
    expect(inCall, "a hit inside a tool call").toBeDefined();
    for (const format of ["--csv", "--tsv"]) {
      const text = cliOn(file, ["search", "docker", "--role", "assistant", format]).stdout;
      const rows = parse(text, {
        columns: true,
        delimiter: format === "--csv" ? "," : "\t",
        quote: format === "--csv" ? '"' : false,
      }) as Array<{ id: string; snippet: string }>;
      const row = rows.find((r) => r.id === String(inCall!.id))!;
      expect(row.snippet).toBe('terminal({"cmd": ">>>docker<<< build ."})');
      expect(row.snippet).toBe(renderToolCallSnippet(inCall!.snippet));
    }
  });

  it("stats and show write every amount in the one money format", () => {
    const file = db();
    // An amount over a dollar, which used to get two decimals where smaller ones got four.
    const sql = new Database(file);
    sql.prepare("UPDATE sessions SET estimated_cost_usd = 1.579 WHERE id = ?").run("20260101_090000_cli001");
    sql.close();
    const rows = JSON.parse(cliOn(file, ["stats", "--by", "model", "--json"]).stdout) as Array<{
      group: string;
      estimated_cost_usd: number | null;
      actual_cost_usd: number | null;
    }>;
    const table = cliOn(file, ["stats", "--by", "model"]).stdout;
    const amounts = table.match(/\$[\d,.]+/g) ?? [];
    expect(amounts.length).toBeGreaterThanOrEqual(4);
    for (const a of amounts) expect(a).toMatch(/^\$\d{1,3}(,\d{3})*\.\d{4}$/);
    const gpt = rows.find((r) => r.group === "openai/gpt-5.4")!;
    expect(table).toContain(formatUsd(gpt.actual_cost_usd!));
    expect(formatUsd(gpt.actual_cost_usd!)).toBe("$0.9100");
    expect(table).toMatch(/^anthropic\/claude-sonnet-4\.6 .* \$1\.\d{4}\s*$/m);
    expect(cliOn(file, ["show", "20260101_090000_cli001", "--no-pager"]).stdout).toContain(" · $1.5790\n");
  });
});
