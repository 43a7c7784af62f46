import { createWriteStream, renameSync, rmSync } from "node:fs";
import type { Writable } from "node:stream";
import { finished } from "node:stream/promises";
import type { SessionStore } from "@hermes/store";
import { Command, Option } from "commander";
import { globalOptions } from "../global-options.js";
import { openExisting, withStore } from "../open-database.js";
import { parseSince } from "../parse-options.js";
import { createProgressBar } from "../render/progress-bar.js";
import { renderMarkdown } from "../render/render-markdown.js";
import type { SessionWithMessages } from "../render/session-view.js";
import { resolveSession } from "../resolve-session.js";
import { extension, hasExtension } from "../store-extensions.js";
import { writeChunk } from "../write-output.js";

type Format = "jsonl" | "json" | "md";

interface ExportOptions {
  format: Format;
  out?: string;
  source?: string;
  since?: number;
}

/** First line of a JSONL export, naming the interchange format and its version. */
export const JSONL_HEADER = { format: "hermes-sessions", version: 1 } as const;

/**
 * The sessions to export, one at a time. Uses the store's streaming export; a store without it
 * is read page by page (one session's messages in memory at a time).
 */
async function* sessionsToExport(
  store: SessionStore,
  o: { sessionIds?: string[]; source?: string; since?: number },
): AsyncGenerator<SessionWithMessages> {
  if (hasExtension(store, "exportStream")) {
    yield* extension(store, "exportStream")(o);
    return;
  }
  if (o.sessionIds !== undefined) {
    for (const id of o.sessionIds) {
      const s = await store.getSession(id);
      if (s !== null) yield { ...s, messages: await store.getMessages(id) };
    }
    return;
  }
  const page = 200;
  for (let offset = 0; ; offset += page) {
    const rows = await store.searchSessions({
      ...(o.source ? { source: o.source } : {}),
      limit: page,
      offset,
    });
    for (const row of rows) {
      if (o.since !== undefined && row.last_active < o.since) continue;
      yield { ...row, messages: await store.getMessages(row.id) };
    }
    if (rows.length < page) return;
  }
}

/** `export`: sessions as JSONL (the interchange format), a JSON array, or Markdown. */
export function exportCommand(): Command {
  return new Command("export")
    .description("export one session or all of them (streamed; JSONL is what `import` reads)")
    .argument("[session]", "session id, prefix or title (default: every session)")
    .addOption(
      new Option("-f, --format <format>", "output format").choices(["jsonl", "json", "md"]).default("jsonl"),
    )
    .option("-o, --out <file>", "write to this file instead of stdout")
    .option("-s, --source <source>", "only sessions from this source")
    .option(
      "--since <date>",
      "only sessions active since a date (2026-01-31) or age (7d)",
      parseSince("--since"),
    )
    .action(async (ref: string | undefined, o: ExportOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      await withStore(await openExisting(g), async (store) => {
        const sessionIds = ref === undefined ? undefined : [await resolveSession(store, ref)];
        const total = sessionIds?.length ?? (await store.sessionCount(o.source ? { source: o.source } : {}));
        const partial = o.out === undefined ? undefined : `${o.out}.partial-${process.pid}`;
        const out: Writable =
          partial === undefined ? process.stdout : createWriteStream(partial, { mode: 0o600 });
        const progress = createProgressBar(`exporting ${o.format}`);
        let count = 0;
        try {
          if (o.format === "jsonl") await writeChunk(out, `${JSON.stringify(JSONL_HEADER)}\n`);
          if (o.format === "json") await writeChunk(out, "[");
          for await (const session of sessionsToExport(store, {
            ...(sessionIds ? { sessionIds } : {}),
            ...(o.source ? { source: o.source } : {}),
            ...(o.since !== undefined ? { since: o.since } : {}),
          })) {
            if (o.format === "jsonl") await writeChunk(out, `${JSON.stringify(session)}\n`);
            else if (o.format === "json")
              await writeChunk(out, `${count > 0 ? "," : ""}\n${JSON.stringify(session)}`);
            else await writeChunk(out, `${count > 0 ? "\n---\n\n" : ""}${renderMarkdown(session)}`);
            count++;
            progress.update(count, Math.max(total, count));
          }
          if (o.format === "json") await writeChunk(out, count > 0 ? "\n]\n" : "]\n");
          if (partial !== undefined) {
            out.end();
            await finished(out);
            renameSync(partial, o.out!);
          }
        } catch (error) {
          if (partial !== undefined) {
            out.destroy();
            rmSync(partial, { force: true });
          }
          throw error;
        } finally {
          progress.finish();
        }
        if (o.out !== undefined) process.stderr.write(`Exported ${count} session(s) to ${o.out}\n`);
      });
    });
}
