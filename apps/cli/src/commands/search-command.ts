import {
  readSessionName,
  renderToolCallSnippet,
  SEARCH_LIMITS,
  type SessionStore,
  snippetParts,
  UNTITLED_SESSION,
} from "@hermes/core";
import { HermesStoreError, type SearchHit } from "@hermes/store";
import { Command } from "commander";
import { usageError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { openForReading, withStore } from "../open-database.js";
import { delimited, type OutputOptions, outputFormat, withOutputOptions } from "../output-format.js";
import { choiceListOption, withPagingOptions } from "../parse-options.js";
import { formatTime } from "../render/format-time.js";
import { createStyle, type TerminalStyle, wantsColor } from "../render/terminal-style.js";
import { oneLine, truncate } from "../render/text-width.js";
import {
  narrows,
  type SelectionOptions,
  selectedSessions,
  withSelectionOptions,
} from "../session-selection.js";
import { printJson } from "../write-output.js";

/** The roles a message can have (the reference writes these four). */
export const ROLES = ["user", "assistant", "tool", "system"] as const;

interface SearchOptions extends SelectionOptions, OutputOptions {
  role?: string[];
  limit: number;
  offset: number;
}

/** Columns of `search --csv/--tsv`. */
const CSV_COLUMNS = [
  "id",
  "session_id",
  "title",
  "role",
  "tool_name",
  "source",
  "model",
  "timestamp",
  "session_started",
  "snippet",
];

/**
 * Marks the matches in a snippet with the style's highlight (`snippetParts` of `@hermes/core`,
 * as the web marks them): FTS5's `>>>…<<<` markers, else the query's terms (CJK substrings).
 */
export function highlightSnippet(snippet: string, query: string, style: TerminalStyle): string {
  return snippetParts(oneLine(snippet), query)
    .map((p) => (p.match ? style.match(p.text) : p.text))
    .join("");
}

function renderHit(n: number, hit: SearchHit, name: string, query: string, style: TerminalStyle): string {
  const head = [
    style.bold(`[${n}]`),
    style.bold(name),
    style.dim(hit.session_id),
    style.dim("·"),
    hit.source,
    style.dim("·"),
    formatTime(hit.timestamp),
    style.dim("·"),
    hit.role + (hit.tool_name ? ` (${hit.tool_name})` : ""),
  ].join(" ");
  const lines = [head, `    ${highlightSnippet(renderToolCallSnippet(hit.snippet), query, style)}`];
  if (hit.context.length > 1) {
    for (const c of hit.context) {
      const text = oneLine(c.content);
      lines.push(style.dim(`      ${c.role}: ${text === "" ? "(no text)" : truncate(text, 100)}`));
    }
  }
  return lines.join("\n");
}

/**
 * The hits of a search in the selected sessions. Sources and roles are the store's own
 * filters; `--model`, `--since`, `--until` and `--title` select sessions first (the store's
 * listing filters), and the ranked hits are read page by page, keeping those in them, until the
 * page asked for is full or the hits run out.
 */
async function searchSelected(store: SessionStore, query: string, o: SearchOptions): Promise<SearchHit[]> {
  const base = {
    ...(o.source !== undefined ? { sourceFilter: o.source } : {}),
    ...(o.excludeSource !== undefined ? { excludeSources: o.excludeSource } : {}),
    ...(o.role !== undefined ? { roleFilter: o.role } : {}),
    includeArchived: o.includeArchived === true,
    includeHidden: o.includeHidden === true,
  };
  if (!narrows(o)) return store.searchMessages(query, { ...base, limit: o.limit, offset: o.offset });
  const selected = new Set((await selectedSessions(store, o))?.map((s) => s.id));
  const kept: SearchHit[] = [];
  const page = SEARCH_LIMITS.maxLimit;
  for (let offset = 0; selected.size > 0; offset += page) {
    const hits = await store.searchMessages(query, { ...base, limit: page, offset });
    kept.push(...hits.filter((h) => selected.has(h.session_id)));
    if (kept.length >= o.offset + o.limit || hits.length < page) break;
  }
  return kept.slice(o.offset, o.offset + o.limit);
}

/** `search`: full-text search over every message (English, code, and CJK text). */
export function searchCommand(): Command {
  const command = withPagingOptions(
    withSelectionOptions(
      new Command("search")
        .description("search messages (FTS5; CJK text too); matches are highlighted")
        .argument("<query...>", 'words, "a phrase", prefix*, OR, a NOT b'),
      { flagged: true },
    ),
    "hits",
    SEARCH_LIMITS.maxLimit,
  )
    .addOption(
      choiceListOption("-r, --role <roles>", "only these roles (repeatable, comma-separated)", ROLES),
    )
    .addHelpText(
      "after",
      '\nEach hit is headed by its session\'s name (title, else first user message) and id. A hit inside\na tool call reads as the call, terminal({"cmd": "docker build"}), in every output but --json.\n',
    );
  return withOutputOptions(command, "hits").action(
    async (words: string[], o: SearchOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      const format = outputFormat(o);
      const query = words.join(" ");
      if (query.trim() === "") throw usageError("The search query is empty");
      await withStore(await openForReading(g), async (store) => {
        let hits: SearchHit[];
        try {
          hits = await searchSelected(store, query, o);
        } catch (error) {
          // A query the store cannot run (only a negation, too long): the user's to fix.
          if (error instanceof HermesStoreError && error.code === "INVALID_ARGUMENT") {
            throw usageError(error.message.replace(/^query /, "The search query "));
          }
          throw error;
        }
        const titles = new Map<string, string | null>();
        for (const hit of hits) {
          if (!titles.has(hit.session_id))
            titles.set(hit.session_id, await store.getSessionTitle(hit.session_id));
        }
        const rows = hits.map((h) => ({ ...h, title: titles.get(h.session_id) ?? null }));
        if (format === "json") return printJson(rows);
        if (format !== "table") {
          // A hit inside a tool call reads as the call (`terminal({...})`), not its JSON.
          const readable = rows.map((h) => ({ ...h, snippet: renderToolCallSnippet(h.snippet) }));
          process.stdout.write(delimited(readable, CSV_COLUMNS, format));
          return;
        }
        if (hits.length === 0) {
          process.stdout.write(`No matches for '${query}'.\n`);
          return;
        }
        const style = createStyle(wantsColor(process.stdout, g.color));
        // Each session named once by the one rule (title, else its first user message).
        const names = new Map<string, string>();
        for (const [id, title] of titles)
          names.set(id, (await readSessionName(store, { id, title })) ?? UNTITLED_SESSION);
        const blocks = rows.map((h, i) =>
          renderHit(o.offset + i + 1, h, names.get(h.session_id) ?? UNTITLED_SESSION, query, style),
        );
        process.stdout.write(`${blocks.join("\n\n")}\n`);
      });
    },
  );
}
