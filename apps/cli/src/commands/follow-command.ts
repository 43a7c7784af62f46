import { type MessageRow, readSessionName, type SessionStore, UNTITLED_SESSION } from "@hermes/core";
import { Command } from "commander";
import { CliError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { openForReading, withStore } from "../open-database.js";
import { parseCount } from "../parse-options.js";
import {
  type RenderConversationOptions,
  renderConversationHeader,
  renderMessage,
} from "../render/render-conversation.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
import { NAME_HELP, resolveSession } from "../resolve-session.js";
import { writeChunk } from "../write-output.js";

interface FollowOptions {
  lines: number;
  interval: number;
  json?: boolean;
  full?: boolean;
}

/** The last `n` messages of a session (read page by page, `n` kept in memory). */
async function lastMessages(store: SessionStore, id: string, n: number): Promise<MessageRow[]> {
  const kept: MessageRow[] = [];
  for await (const m of store.iterMessages(id)) {
    kept.push(m);
    if (kept.length > Math.max(n, 1)) kept.shift();
  }
  return kept;
}

/**
 * `follow`: prints messages as another process (the agent) appends them, like `tail -f`, until
 * Ctrl-C. With a session: its last `--lines` messages, then each new one. Without: every new
 * message of every session, each session introduced when it starts or speaks.
 */
export function followCommand(): Command {
  return new Command("follow")
    .description("print new messages as they are written, like tail -f (Ctrl-C stops)")
    .argument("[session]", "session id, prefix or title (default: every session, new ones too)")
    .addHelpText("after", NAME_HELP)
    .option("-n, --lines <n>", "messages of the session to print first", parseCount("--lines"), 10)
    .option("--interval <ms>", "how often to check for changes", parseCount("--interval", { min: 10 }), 250)
    .option("--full", "print tool results in full (default: first 12 lines)")
    .option("--json", "print each message as one line of JSON (NDJSON)")
    .action(async (ref: string | undefined, o: FollowOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      await withStore(await openForReading(g), async (store) => {
        if (store.watchChanges === undefined) {
          throw new CliError("follow needs a state.db file: this store has no change feed yet");
        }
        const render: RenderConversationOptions = {
          style: createStyle(wantsColor(process.stdout, g.color)),
          toolLines: o.full ? 0 : 12,
        };
        const print = (m: MessageRow) =>
          writeChunk(process.stdout, o.json ? `${JSON.stringify(m)}\n` : renderMessage(m, render));
        const sessionId = ref === undefined ? undefined : await resolveSession(store, ref);
        let afterMessageId: number | undefined;
        if (sessionId !== undefined) {
          const session = await store.getSession(sessionId);
          if (session === null) throw new CliError(`Session ${sessionId} disappeared while reading it`);
          if (!o.json) await writeChunk(process.stdout, renderConversationHeader(session, render));
          const last = await lastMessages(store, sessionId, o.lines);
          if (o.lines > 0) for (const m of last.slice(-o.lines)) await print(m);
          afterMessageId = last.at(-1)?.id;
        }
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once("SIGINT", onSignal);
        process.once("SIGTERM", onSignal);
        let speaker: string | undefined = sessionId;
        try {
          for await (const change of store.watchChanges({
            signal: stop.signal,
            intervalMs: o.interval,
            includeMessages: true,
            ...(sessionId !== undefined ? { sessionId } : {}),
            ...(afterMessageId !== undefined ? { afterMessageId } : {}),
          })) {
            for (const id of change.newSessionIds) {
              if (o.json) continue;
              const s = await store.getSession(id);
              if (s !== null)
                await writeChunk(
                  process.stdout,
                  `${render.style.bold(`━━ new session ${id}`)} ${render.style.dim(`${s.source}${s.model ? ` · ${s.model}` : ""}`)}\n\n`,
                );
            }
            for (const m of change.messages ?? []) {
              if (!o.json && m.session_id !== speaker) {
                const name = await readSessionName(store, m.session_id);
                await writeChunk(
                  process.stdout,
                  `${render.style.bold(`━━ ${name ?? UNTITLED_SESSION}`)}  ${render.style.dim(m.session_id)}\n\n`,
                );
              }
              speaker = m.session_id;
              await print(m);
            }
          }
        } finally {
          process.removeListener("SIGINT", onSignal);
          process.removeListener("SIGTERM", onSignal);
        }
      });
    });
}
