import {
  type ListSessionsRichOptions,
  MAX_LIMIT,
  type RichSessionRow,
  type SessionStore,
} from "@hermes/core";
import type { Command } from "commander";
import { collectList, parseSince } from "./parse-options.js";

/**
 * The flags that select sessions, the same on every command that works on a set of them
 * (`list`, `search`, `stats`, `export`, `prune`): defined here once, described once
 * ({@link SELECTION_HELP}).
 */
export interface SelectionOptions {
  /** `-s, --source`: only these sources. */
  source?: string[];
  /** `--exclude-source`: not these sources. */
  excludeSource?: string[];
  /** `--model`: only these models. */
  model?: string[];
  /** `--since`: sessions started at or after (epoch seconds). */
  since?: number;
  /** `--until`: sessions started before (epoch seconds). */
  until?: number;
  /** `--title`: a part of the title (any ASCII case) or the start of the id. */
  title?: string;
  /** `--include-archived`: a newer agent's archived sessions too. */
  includeArchived?: boolean;
  /** `--include-hidden`: a newer agent's hidden sessions too. */
  includeHidden?: boolean;
}

/** What every command's `--help` says about the selection flags. */
export const SELECTION_HELP = `
Selecting sessions (the same flags on list, search, stats, export and prune; all combine):
  --source/--exclude-source and --model take names, repeatable or comma-separated;
  --since and --until a date (2026-01-31), a time (2026-01-31T08:00Z) or an age (7d), by
  when the session started (--until: before it); --title a part of the title, in any case, or
  the start of the id.
`;

/**
 * Adds the selection flags to a command; `flagged` adds `--include-archived` and
 * `--include-hidden` (a newer agent's file: its flagged sessions are left out by default).
 */
export function withSelectionOptions(command: Command, o: { flagged?: boolean } = {}): Command {
  command
    .option(
      "-s, --source <sources>",
      "only these sources: cli, telegram, … (repeatable, comma-separated)",
      collectList,
    )
    .option("--exclude-source <sources>", "not these sources (repeatable, comma-separated)", collectList)
    .option("--model <models>", "only these models (repeatable, comma-separated)", collectList)
    .option(
      "--since <date>",
      "only sessions started since a date (2026-01-31) or age (7d)",
      parseSince("--since"),
    )
    .option(
      "--until <date>",
      "only sessions started before a date (2026-01-31) or age (7d)",
      parseSince("--until"),
    )
    .option(
      "--title <text>",
      "only sessions whose title contains this (any case), or whose id starts with it",
    );
  if (o.flagged) {
    command
      .option("--include-archived", "include sessions a newer agent marks archived (left out by default)")
      .option("--include-hidden", "include sessions a newer agent marks hidden (left out by default)");
  }
  return command.addHelpText("after", SELECTION_HELP);
}

/** A filter beyond sources is given (`--model`, `--since`, `--until`, `--title`). */
export function narrows(o: SelectionOptions): boolean {
  return o.model !== undefined || o.since !== undefined || o.until !== undefined || o.title !== undefined;
}

/** The selection's `listSessionsRich` filters (without sources and paging). */
export function listFilters(o: SelectionOptions): ListSessionsRichOptions {
  return {
    ...(o.model !== undefined ? { models: o.model } : {}),
    ...(o.since !== undefined ? { startedAfter: o.since } : {}),
    ...(o.until !== undefined ? { startedBefore: o.until } : {}),
    ...(o.title !== undefined ? { title: o.title } : {}),
    includeArchived: o.includeArchived === true,
    includeHidden: o.includeHidden === true,
  };
}

/**
 * The sources a command works on: `null` for every source (no filter given), else the
 * `--source` list (or every source in the database) without the `--exclude-source` ones.
 */
export async function selectSources(store: SessionStore, o: SelectionOptions): Promise<string[] | null> {
  if (o.source === undefined && o.excludeSource === undefined) return null;
  const include = o.source ?? (await allSources(store));
  const exclude = new Set(o.excludeSource ?? []);
  return [...new Set(include)].filter((s) => !exclude.has(s));
}

/**
 * Every source that has a session (one `GROUP BY` over sessions), archived and hidden ones
 * included: the commands leave those sessions out themselves.
 */
export async function allSources(store: SessionStore): Promise<string[]> {
  const rows = await store.usageStats({ groupBy: "source", includeArchived: true, includeHidden: true });
  return rows.map((r) => r.group).filter((g): g is string => g !== null);
}

/** `listSessionsRich`'s source options for the selected sources (`null`: every source). */
export async function sourceFilters(
  store: SessionStore,
  sources: string[] | null,
): Promise<Pick<ListSessionsRichOptions, "source" | "excludeSources">> {
  if (sources === null) return {};
  if (sources.length === 1) return { source: sources[0]! };
  return { excludeSources: (await allSources(store)).filter((s) => !sources.includes(s)) };
}

/**
 * Every session the flags select, children included, newest first, read through the store's
 * own listing filters (so on either backend); `null` when no flag is given, unless `always`
 * (then every listed session: the visibility flags still apply).
 */
export async function selectedSessions(
  store: SessionStore,
  o: SelectionOptions,
  { always = false }: { always?: boolean } = {},
): Promise<RichSessionRow[] | null> {
  const sources = await selectSources(store, o);
  if (sources === null && !narrows(o) && !always) return null;
  if (sources !== null && sources.length === 0) return [];
  const base: ListSessionsRichOptions = {
    ...(await sourceFilters(store, sources)),
    ...listFilters(o),
    includeChildren: true,
    projectCompressionTips: false,
  };
  const found: RichSessionRow[] = [];
  for (let offset = 0; ; offset += MAX_LIMIT) {
    const page = await store.listSessionsRich({ ...base, limit: MAX_LIMIT, offset });
    found.push(...page);
    if (page.length < MAX_LIMIT) return found;
  }
}
