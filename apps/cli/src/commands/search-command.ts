import type { SearchHit } from "@hermes/store";
import { Command } from "commander";
import { usageError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { openExisting, withStore } from "../open-database.js";
import { collectList, parseCount } from "../parse-options.js";
import { formatTime } from "../render/format-time.js";
import { createStyle, type TerminalStyle, wantsColor } from "../render/terminal-style.js";
import { oneLine, truncate } from "../render/text-width.js";
import { printJson } from "../write-output.js";

interface SearchOptions {
  source?: string[];
  excludeSource?: string[];
  role?: string[];
  limit: number;
  offset: number;
  json?: boolean;
}

/** Replaces the store's `>>>…<<<` snippet markers with the style's match highlight. */
export function highlightSnippet(snippet: string, style: TerminalStyle): string {
  return oneLine(snippet).replace(/>>>([\s\S]*?)<<</g, (_, text: string) => style.match(text));
}

function renderHit(n: number, hit: SearchHit, title: string | null, style: TerminalStyle): string {
  const head = [
    style.bold(`[${n}]`),
    style.bold(title ?? "(untitled)"),
    style.dim(hit.session_id),
    style.dim("·"),
    hit.source,
    style.dim("·"),
    formatTime(hit.timestamp),
    style.dim("·"),
    hit.role + (hit.tool_name ? ` (${hit.tool_name})` : ""),
  ].join(" ");
  const lines = [head, `    ${highlightSnippet(hit.snippet, style)}`];
  if (hit.context.length > 1) {
    for (const c of hit.context) {
      lines.push(style.dim(`      ${c.role}: ${truncate(oneLine(c.content), 100)}`));
    }
  }
  return lines.join("\n");
}

/** `search`: full-text search over every message (English, code, and CJK text). */
export function searchCommand(): Command {
  return new Command("search")
    .description("search messages (FTS5; CJK text too); matches are highlighted")
    .argument("<query...>", 'words, "a phrase", prefix*, OR / NOT')
    .option("-s, --source <sources>", "only these sources (repeatable, comma-separated)", collectList)
    .option("--exclude-source <sources>", "not these sources (repeatable, comma-separated)", collectList)
    .option("-r, --role <roles>", "only these roles: user, assistant, tool (repeatable)", collectList)
    .option("-n, --limit <n>", "at most this many hits", parseCount("--limit"), 20)
    .option("--offset <n>", "skip this many hits", parseCount("--offset"), 0)
    .option("--json", "print the hits as JSON")
    .action(async (words: string[], o: SearchOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      const query = words.join(" ");
      if (query.trim() === "") throw usageError("The search query is empty");
      await withStore(await openExisting(g), async (store) => {
        const hits = await store.searchMessages(query, {
          ...(o.source !== undefined ? { sourceFilter: o.source } : {}),
          ...(o.excludeSource !== undefined ? { excludeSources: o.excludeSource } : {}),
          ...(o.role !== undefined ? { roleFilter: o.role } : {}),
          limit: o.limit,
          offset: o.offset,
        });
        const titles = new Map<string, string | null>();
        for (const hit of hits) {
          if (!titles.has(hit.session_id))
            titles.set(hit.session_id, await store.getSessionTitle(hit.session_id));
        }
        if (o.json) return printJson(hits.map((h) => ({ ...h, title: titles.get(h.session_id) ?? null })));
        if (hits.length === 0) {
          process.stdout.write(`No matches for '${query}'.\n`);
          return;
        }
        const style = createStyle(wantsColor(process.stdout, g.color));
        const blocks = hits.map((h, i) =>
          renderHit(o.offset + i + 1, h, titles.get(h.session_id) ?? null, style),
        );
        process.stdout.write(`${blocks.join("\n\n")}\n`);
      });
    });
}
