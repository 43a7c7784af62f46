import type { Command } from "commander";

/** Options every command accepts (declared on the root program). */
export interface GlobalOptions {
  /** Database file; default `resolveStatePath()`. */
  db?: string;
  /** Print stack traces of errors. */
  debug?: boolean;
  /** `--no-color`: never use ANSI colour, even on a terminal. */
  color?: boolean;
}

/** The root program's options as seen from a subcommand. */
export function globalOptions(command: Command): GlobalOptions {
  return command.optsWithGlobals() as GlobalOptions;
}
