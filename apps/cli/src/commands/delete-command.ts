import { Command } from "commander";
import { CliError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { openExisting, withStore } from "../open-database.js";
import { countOf } from "../render/plural.js";
import { EXACT_NAME_HELP, resolveSessionExactly } from "../resolve-session.js";
import { printJson } from "../write-output.js";

/** Asks on the terminal (`@inquirer/confirm`, on stderr so stdout stays the result); default no. */
async function ask(message: string): Promise<boolean> {
  // Loaded when asked: it is the heaviest import of the CLI, and only delete asks.
  const { default: confirm } = await import("@inquirer/confirm");
  try {
    return await confirm({ message, default: false }, { output: process.stderr });
  } catch (error) {
    // Ctrl-C or a closed terminal: an answer of "no".
    if (error instanceof Error && error.name === "ExitPromptError") return false;
    throw error;
  }
}

/** `delete`: removes one session and its messages; its children are kept, unlinked. */
export function deleteCommand(): Command {
  return new Command("delete")
    .alias("rm")
    .description("delete a session and its messages (asks first on a terminal; --yes otherwise)")
    .argument("<session>", "session id, unique id prefix, or exact title")
    .option("-y, --yes", "do not ask")
    .option("--json", "print the result as JSON")
    .addHelpText("after", EXACT_NAME_HELP)
    .action(async (ref: string, o: { yes?: boolean; json?: boolean }, cmd: Command) => {
      const g = globalOptions(cmd);
      await withStore(await openExisting(g), async (store) => {
        const id = await resolveSessionExactly(store, ref);
        const session = await store.getSession(id);
        if (!o.yes) {
          if (process.stdin.isTTY !== true) {
            throw new CliError(`Refusing to delete ${id} without --yes (no terminal to ask on)`);
          }
          const label = session?.title ? ` '${session.title}'` : "";
          const ok = await ask(
            `Delete session ${id}${label} and its ${countOf(await store.messageCount({ sessionId: id }), "message")}?`,
          );
          if (!ok) {
            if (o.json) return printJson({ id, deleted: false });
            process.stdout.write("Nothing deleted.\n");
            return;
          }
        }
        const deleted = await store.deleteSession(id);
        if (o.json) return printJson({ id, deleted });
        process.stdout.write(deleted ? `Deleted ${id}.\n` : `${id} was already gone.\n`);
      });
    });
}
