import type { Command } from "commander";

/**
 * `--include-archived` and `--include-hidden`: a newer agent's file flags sessions archived
 * (by the user, or by its stale sweep) or hidden, and its listings leave them out; so does
 * every command that counts or lists sessions, unless asked.
 */
export interface VisibilityOptions {
  includeArchived?: boolean;
  includeHidden?: boolean;
}

/** Adds `--include-archived` and `--include-hidden` to a command that counts or lists sessions. */
export function withVisibilityOptions(command: Command): Command {
  return command
    .option("--include-archived", "include sessions a newer agent marks archived (left out by default)")
    .option("--include-hidden", "include sessions a newer agent marks hidden (left out by default)");
}

/** The store options of {@link VisibilityOptions}: both always present. */
export function visibilityOf(o: VisibilityOptions): { includeArchived: boolean; includeHidden: boolean } {
  return { includeArchived: o.includeArchived === true, includeHidden: o.includeHidden === true };
}
