import { once } from "node:events";
import { sessionPreview } from "@hermes/core";
import { sessionToMarkdown } from "@hermes/store";
import { Command } from "commander";
import { CliError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { openForReading, withStore } from "../open-database.js";
import { openPager } from "../render/pager.js";
import { compactionMarks, renderConversationHeader, renderMessage } from "../render/render-conversation.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
import { NAME_HELP, resolveSession } from "../resolve-session.js";
import { printJson } from "../write-output.js";

interface ShowOptions {
  /** `--no-pager` sets this to false. */
  pager?: boolean;
  markdown?: boolean;
  json?: boolean;
  reasoning?: boolean;
  full?: boolean;
}

/** `show`: one conversation, rendered for a terminal, as Markdown or as JSON. */
export function showCommand(): Command {
  return new Command("show")
    .description(
      "show a conversation (by id, unique id prefix, or title); on a newer agent's file, its marks and the compaction point",
    )
    .argument("<session>", "session id, unique id prefix, or title ('Fix bug' finds the latest 'Fix bug #N')")
    .option("--markdown", "print Markdown instead of the terminal rendering")
    .option(
      "--json",
      "print the session row and its messages as JSON (with flags, message uids and view state where the file has them)",
    )
    .option("--reasoning", "expand reasoning instead of folding it")
    .option("--full", "print tool results in full (default: first 12 lines)")
    .option("--no-pager", "never page (default on a terminal: $PAGER, else less)")
    .addHelpText("after", NAME_HELP)
    .action(async (ref: string, o: ShowOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      if (o.markdown && o.json) throw new CliError("Choose one of --markdown and --json", 2);
      await withStore(await openForReading(g), async (store) => {
        const id = await resolveSession(store, ref);
        const session = await store.getSession(id);
        if (session === null) throw new CliError(`Session ${id} disappeared while reading it`);
        if (o.json) return printJson({ ...session, messages: await store.getMessages(id) });
        const out = openPager(o.pager !== false);
        const emit = async (text: string) => {
          if (out.closed()) return;
          if (!out.stream.write(text))
            await Promise.race([once(out.stream, "drain"), once(out.stream, "close")]);
        };
        try {
          if (o.markdown) {
            await emit(sessionToMarkdown({ ...session, messages: await store.getMessages(id) }));
            return;
          }
          const lineage = await store.getLineage(id);
          const render = {
            style: createStyle(wantsColor(process.stdout, g.color)),
            reasoning: o.reasoning === true,
            toolLines: o.full ? 0 : 12,
            lineage:
              lineage === null
                ? null
                : {
                    selfLink: lineage.session.link,
                    ancestors: lineage.ancestors,
                    descendants: lineage.descendants,
                  },
            // An untitled session is named by its first user message.
            preview: session.title === null ? await sessionPreview(store, id) : "",
          };
          // How many rows the conversation displays (a newer agent's counter counts fewer).
          const first = await store.getMessagePage(id, { from: "start", limit: 1 });
          await emit(renderConversationHeader(session, render, first.messages.length + first.after));
          const mark = compactionMarks(render.style);
          // Page by page: a session of 100,000 messages prints without being loaded whole.
          for await (const m of store.iterMessages(id)) {
            if (out.closed()) break;
            await emit(mark(m) + renderMessage(m, render));
          }
        } finally {
          await out.done();
        }
      });
    });
}
