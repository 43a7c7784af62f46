import { CommanderError } from "commander";
import { CliError, EXIT, errorLine } from "./cli-error.js";
import { createProgram } from "./cli-program.js";

/**
 * Runs `hermes-sessions` with `argv` (without `node` and the script) and returns the exit
 * code. Errors are one line on stderr; `--debug` adds the stack.
 */
export async function runCli(argv: string[]): Promise<number> {
  const program = createProgram();
  const debug = argv.includes("--debug");
  try {
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander has printed its message already; help and --version are not failures.
      if (error.exitCode === 0) return EXIT.ok;
      return EXIT.usage;
    }
    process.stderr.write(`error: ${errorLine(error)}\n`);
    if (debug && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    return error instanceof CliError ? error.exitCode : EXIT.failure;
  }
}
