import { readFileSync } from "node:fs";
import { Command } from "commander";
import { backupCommand } from "./commands/backup-command.js";
import { completeCommand, completionCommand } from "./commands/completion-command.js";
import { deleteCommand } from "./commands/delete-command.js";
import { doctorCommand } from "./commands/doctor-command.js";
import { exportCommand } from "./commands/export-command.js";
import { followCommand } from "./commands/follow-command.js";
import { forkCommand } from "./commands/fork-command.js";
import { importCommand } from "./commands/import-command.js";
import { listCommand } from "./commands/list-command.js";
import { migrateCommand } from "./commands/migrate-command.js";
import { migrateToPostgresCommand } from "./commands/migrate-to-postgres-command.js";
import { pruneCommand } from "./commands/prune-command.js";
import { restoreCommand } from "./commands/restore-command.js";
import { searchCommand } from "./commands/search-command.js";
import { serveCommand } from "./commands/serve-command.js";
import { showCommand } from "./commands/show-command.js";
import { statsCommand } from "./commands/stats-command.js";
import { titleCommand } from "./commands/title-command.js";

/** This package's version, from its package.json (beside `dist/` when installed, too). */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

/** The `hermes-sessions` program with every command registered. */
export function createProgram(): Command {
  const program = new Command("hermes-sessions")
    .description("Look into, search, export and maintain Hermes Agent's session store (state.db)")
    .version(cliVersion())
    .option("--db <path>", "database file (default: $HERMES_HOME/state.db, else ~/.hermes/state.db)")
    .option("--no-color", "never colour the output")
    .option("--debug", "print stack traces of errors")
    .showSuggestionAfterError(true)
    // Errors are one line on stderr: commander puts "(Did you mean …?)" on a line of its own.
    .configureOutput({ outputError: (text, write) => write(`${text.trimEnd().replace(/\n+/g, " ")}\n`) })
    // Throw instead of exiting, so runCli decides the exit code (2 for usage errors).
    .exitOverride();
  for (const command of [
    listCommand(),
    showCommand(),
    followCommand(),
    searchCommand(),
    exportCommand(),
    importCommand(),
    forkCommand(),
    titleCommand(),
    pruneCommand(),
    deleteCommand(),
    statsCommand(),
    doctorCommand(),
    migrateCommand(),
    migrateToPostgresCommand(),
    backupCommand(),
    restoreCommand(),
    serveCommand(),
    completionCommand(),
  ]) {
    // addCommand does not copy the parent's settings (unlike .command()): without this, a bad
    // flag on a subcommand would exit the process from inside commander with code 1.
    command.copyInheritedSettings(program);
    for (const sub of command.commands) sub.copyInheritedSettings(command);
    program.addCommand(command);
  }
  const complete = completeCommand(program);
  complete.copyInheritedSettings(program);
  program.addCommand(complete, { hidden: true });
  return program;
}
