import { createWriteStream, renameSync, rmSync } from "node:fs";
import { type Writable, Writable as WritableStream } from "node:stream";
import { finished } from "node:stream/promises";
import { type SessionStore, sessionToMarkdown } from "@hermes/core";
import { Command, Option } from "commander";
import { CliError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { openForReading, withStore } from "../open-database.js";
import { countOf } from "../render/plural.js";
import { createProgress, type Progress } from "../render/progress.js";
import { NAME_HELP, resolveSession } from "../resolve-session.js";
import {
  type SelectionOptions,
  selectedSessions,
  selectSources,
  withSelectionOptions,
} from "../session-selection.js";
import { visibilityOf } from "../visibility-options.js";
import { writeChunk } from "../write-output.js";

type Format = "jsonl" | "json" | "md";

interface ExportOptions extends SelectionOptions {
  format: Format;
  out?: string;
}

interface ExportFilter {
  sessionIds?: string[];
  source?: string;
  since?: number;
}

/**
 * Passes bytes through to `target` (with its backpressure) and counts finished JSONL lines
 * for the progress bar: the store's JSONL export writes a session message by message, so a
 * session is done when its line ends. JSON escapes newlines inside strings, so every `\n` is
 * a line end.
 */
function countingSink(target: Writable, progress: Progress, total: number): Writable {
  let lines = 0;
  return new WritableStream({
    write(chunk: Buffer | string, _encoding, callback) {
      const text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
      for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++;
      if (lines > 1) progress.update(lines - 1, Math.max(total, lines - 1));
      if (target.write(chunk)) callback();
      else target.once("drain", () => callback());
    },
  });
}

/**
 * What to export: one session, or every selected session. The store filters on one source
 * and a start time itself; anything more (several sources, --until, --model, --title) is turned
 * into the selected sessions' ids. As `list` and `stats`, an export of many sessions leaves out
 * those a newer agent flags archived or hidden unless `--include-archived`/`--include-hidden`
 * (`leftOut` counts them); a session named by the user is exported whatever its flags.
 */
async function exportFilter(
  store: SessionStore,
  ref: string | undefined,
  o: ExportOptions,
): Promise<{ filter: ExportFilter; total: number; leftOut: number }> {
  const since = o.since !== undefined ? { since: o.since } : {};
  const sources = await selectSources(store, o);
  const beyond = o.until !== undefined || o.model !== undefined || o.title !== undefined;
  if (ref !== undefined) {
    let ids = [await resolveExported(store, ref)];
    if (sources !== null || beyond) {
      const all = { ...o, includeArchived: true, includeHidden: true };
      const chosen = new Set((await selectedSessions(store, all))?.map((s) => s.id));
      ids = ids.filter((id) => chosen.has(id));
    }
    return { filter: { sessionIds: ids, ...since }, total: ids.length, leftOut: 0 };
  }
  const flagged = await flaggedLeftOut(store, o);
  if (sources === null && !beyond && flagged === 0) {
    return { filter: since, total: await store.sessionCount(), leftOut: 0 };
  }
  if (sources !== null && sources.length === 1 && !beyond && flagged === 0) {
    return {
      filter: { source: sources[0]!, ...since },
      total: await store.sessionCount({ source: sources[0]! }),
      leftOut: 0,
    };
  }
  const ids = ((await selectedSessions(store, o, { always: true })) ?? []).map((s) => s.id);
  return { filter: { sessionIds: ids, ...since }, total: ids.length, leftOut: flagged };
}

/**
 * How many sessions the visibility flags leave out of an export (0 on a file without flags, or
 * with both `--include-*` flags): every session, less those `usageStats` counts.
 */
async function flaggedLeftOut(store: SessionStore, o: ExportOptions): Promise<number> {
  if (o.includeArchived === true && o.includeHidden === true) return 0;
  const listed = await store.usageStats({ groupBy: "source", ...visibilityOf(o) });
  const shown = listed.reduce((n, r) => n + r.sessions, 0);
  return Math.max(0, (await store.sessionCount()) - shown);
}

/** The note of an export that left flagged sessions out. */
function leftOutNote(n: number): string {
  return `Left out ${countOf(n, "session")} a newer agent flags archived or hidden (--include-archived, --include-hidden to export them too).`;
}

/**
 * The session `export SESSION` names. A name that matches none and looks like a file
 * (`out.jsonl`, `backups/x.md`) was most likely meant as the output: the error says how.
 */
async function resolveExported(store: SessionStore, ref: string): Promise<string> {
  try {
    return await resolveSession(store, ref);
  } catch (error) {
    if (!(error instanceof CliError) || !/[/\\]|\.(jsonl|json|md|txt)$/i.test(ref)) throw error;
    throw new CliError(
      `No session matches '${ref}'; to export every session to that file, give it with --out: ` +
        `hermes-sessions export --out ${ref}`,
      error.exitCode,
      { cause: error },
    );
  }
}

/** `export`: sessions as JSONL (the interchange format), a JSON array, or Markdown. */
export function exportCommand(): Command {
  return withSelectionOptions(
    new Command("export")
      .description(
        "export one session or all of them (streamed; `import` reads JSONL and JSON); from a newer agent's file, every row of each session with its view state, flags and uids",
      )
      .argument("[session]", "session id, prefix or title (default: every session); the file is --out")
      .addHelpText("after", NAME_HELP)
      .addOption(
        new Option("-f, --format <format>", "jsonl (interchange), json (one array) or md (Markdown)")
          .choices(["jsonl", "json", "md"])
          .default("jsonl"),
      )
      .option("-o, --out <file>", "write to this file (created 0600) instead of stdout"),
    { flagged: true },
  ).action(async (ref: string | undefined, o: ExportOptions, cmd: Command) => {
    const g = globalOptions(cmd);
    await withStore(await openForReading(g), async (store) => {
      const { filter, total, leftOut } = await exportFilter(store, ref, o);
      // Written beside the target and renamed when complete: an interrupted export never
      // leaves a truncated file under the name asked for.
      const partial = o.out === undefined ? undefined : `${o.out}.partial-${process.pid}`;
      const out: Writable =
        partial === undefined ? process.stdout : createWriteStream(partial, { mode: 0o600, flags: "wx" });
      const progress = createProgress(`exporting ${o.format}`);
      let count = 0;
      let messages = 0;
      try {
        if (o.format === "jsonl") {
          // The store streams each session message by message: constant memory however long.
          const sink = countingSink(out, progress, total);
          const report = await store.exportJsonl(sink, filter);
          sink.end();
          await finished(sink);
          count = report.sessions;
          messages = report.messages;
        } else {
          if (o.format === "json") await writeChunk(out, "[");
          // JSON and Markdown hold one session in memory at a time (JSONL not even that).
          for await (const session of store.exportStream(filter)) {
            if (o.format === "json") {
              await writeChunk(out, `${count > 0 ? "," : ""}\n${JSON.stringify(session)}`);
              messages += session.messages.length;
            } else {
              // A newer agent's file: the stream carries every row (superseded ones too);
              // Markdown shows what the agent displays, in its order.
              const shown = session.messages.filter((m) => m.view_state !== "superseded").length;
              const md = session.messages.some((m) => "view_state" in m)
                ? await store.exportSessionMarkdown(session.id)
                : null;
              await writeChunk(out, `${count > 0 ? "\n---\n\n" : ""}${md ?? sessionToMarkdown(session)}`);
              messages += shown;
            }
            count++;
            progress.update(count, Math.max(total, count));
          }
          if (o.format === "json") await writeChunk(out, count > 0 ? "\n]\n" : "]\n");
        }
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
      if (o.out !== undefined) {
        process.stderr.write(
          `Exported ${countOf(count, "session")} with ${countOf(messages, "message")} to ${o.out}\n`,
        );
      }
      if (leftOut > 0) process.stderr.write(`${leftOutNote(leftOut)}\n`);
    });
  });
}
