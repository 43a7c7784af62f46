import type { SessionStore } from "@hermes/core";
import type { Command } from "commander";
import { collectList } from "./parse-options.js";

/** `--source` and `--exclude-source`, as every command that filters by source takes them. */
export interface SourceOptions {
  source?: string[];
  excludeSource?: string[];
}

/** Adds `-s, --source` and `--exclude-source` (repeatable, comma-separated) to a command. */
export function withSourceOptions(command: Command): Command {
  return command
    .option(
      "-s, --source <sources>",
      "only these sources: cli, telegram, … (repeatable, comma-separated)",
      collectList,
    )
    .option("--exclude-source <sources>", "not these sources (repeatable, comma-separated)", collectList);
}

/**
 * The sources a command works on: `null` for every source (no filter given), else the
 * `--source` list (or every source in the database) without the `--exclude-source` ones.
 */
export async function selectSources(store: SessionStore, o: SourceOptions): Promise<string[] | null> {
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
