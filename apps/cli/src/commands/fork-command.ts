import { Command } from "commander";
import { globalOptions } from "../global-options.js";
import { openExisting, withStore } from "../open-database.js";
import { parseCount } from "../parse-options.js";
import { countOf } from "../render/plural.js";
import { NAME_HELP, resolveSession } from "../resolve-session.js";
import { printJson } from "../write-output.js";

interface ForkOptions {
  at?: number;
  title?: string;
  id?: string;
  json?: boolean;
}

/** `fork`: a new session with the messages of another up to a point, linked to it. */
export function forkCommand(): Command {
  return new Command("fork")
    .description("fork a session: copy its messages (up to --at) into a new child session")
    .argument("<session>", "session id, prefix or title")
    .addHelpText("after", NAME_HELP)
    .option("--at <message-id>", "copy messages up to and including this message id", parseCount("--at"))
    .option("-t, --title <title>", "title of the fork (default: the next in the lineage, 'X #2')")
    .option("--id <id>", "id of the new session (default: generated)")
    .option("--json", "print the new session as JSON")
    .action(async (ref: string, o: ForkOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      await withStore(await openExisting(g), async (store) => {
        const source = await resolveSession(store, ref);
        const session = await store.forkSession(source, {
          ...(o.at !== undefined ? { atMessageId: o.at } : {}),
          ...(o.title !== undefined ? { title: o.title } : {}),
          ...(o.id !== undefined ? { newId: o.id } : {}),
        });
        if (o.json) return printJson(session);
        const title = session.title ? ` '${session.title}'` : "";
        process.stdout.write(
          `Forked ${source} → ${session.id}${title} (${countOf(session.message_count ?? 0, "message")})\n`,
        );
      });
    });
}
