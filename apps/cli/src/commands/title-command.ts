import { Command } from "commander";
import { usageError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { openExisting, withStore } from "../open-database.js";
import { EXACT_NAME_HELP, resolveSessionExactly } from "../resolve-session.js";
import { printJson } from "../write-output.js";

interface TitleOptions {
  next?: string;
  clear?: boolean;
  json?: boolean;
}

/** `title`: read, set or clear a session's title, or compute the next title of a lineage. */
export function titleCommand(): Command {
  return new Command("title")
    .description("show or set a session's title; --next BASE prints the next title in a lineage")
    .argument("[session]", "session id, unique id prefix, or exact title")
    .argument("[title]", "the new title (unique; at most 100 characters)")
    .option("--next <base>", "print the next free title of a lineage ('Fix bug' → 'Fix bug #3')")
    .option("--clear", "remove the session's title")
    .option("--json", "print the result as JSON")
    .addHelpText("after", EXACT_NAME_HELP)
    .action(async (ref: string | undefined, title: string | undefined, o: TitleOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      if (o.next !== undefined) {
        if (ref !== undefined) throw usageError("--next takes a base title and no session");
        await withStore(await openExisting(g), async (store) => {
          const next = await store.getNextTitleInLineage(o.next!);
          if (o.json) return printJson({ base: o.next, next });
          process.stdout.write(`${next}\n`);
        });
        return;
      }
      if (ref === undefined) throw usageError("A session is required (or --next <base>)");
      if (o.clear && title !== undefined) throw usageError("Give a title or --clear, not both");
      await withStore(await openExisting(g), async (store) => {
        const id = await resolveSessionExactly(store, ref);
        if (title === undefined && !o.clear) {
          const current = await store.getSessionTitle(id);
          if (o.json) return printJson({ id, title: current });
          // stdout is the title and nothing else, so `$(hermes-sessions title X)` is empty for
          // an untitled session; the hint is for the person, on stderr.
          if (current === null)
            process.stderr.write(`${id} has no title (set one: hermes-sessions title ${id} 'New title')\n`);
          else process.stdout.write(`${current}\n`);
          return;
        }
        await store.setSessionTitle(id, o.clear ? null : title!);
        const now = await store.getSessionTitle(id);
        if (o.json) return printJson({ id, title: now });
        process.stdout.write(now === null ? `Cleared the title of ${id}\n` : `${id} is now '${now}'\n`);
      });
    });
}
