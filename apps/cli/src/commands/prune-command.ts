import type { SessionStore, SessionWithLastActive } from "@hermes/core";
import { Command } from "commander";
import { globalOptions } from "../global-options.js";
import { openExisting, withStore } from "../open-database.js";
import { parseNumber } from "../parse-options.js";
import { formatCount, formatTime } from "../render/format-time.js";
import { countOf } from "../render/plural.js";
import { isPinned } from "../render/session-marks.js";
import { outputWidth, renderTable } from "../render/table.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
import {
  narrows,
  type SelectionOptions,
  selectedSessions,
  selectSources,
  withSelectionOptions,
} from "../session-selection.js";
import { visibilityOf } from "../visibility-options.js";
import { printJson } from "../write-output.js";

interface PruneOptions extends SelectionOptions {
  olderThan: number;
  dryRun?: boolean;
  json?: boolean;
}

/**
 * The sessions `pruneSessions` would delete, by the reference's rule: ended, and started more
 * than `days` ago (active sessions are never pruned); never a pinned one (the agent never
 * prunes them), and archived or hidden ones only when asked (as the listings).
 */
async function candidates(
  store: SessionStore,
  days: number,
  visibility: { includeArchived: boolean; includeHidden: boolean },
  source?: string,
): Promise<SessionWithLastActive[]> {
  const cutoff = Date.now() / 1000 - days * 86_400;
  const found: SessionWithLastActive[] = [];
  const page = 500;
  for (let offset = 0; ; offset += page) {
    const rows = await store.searchSessions({
      ...(source ? { source } : {}),
      ...visibility,
      limit: page,
      offset,
    });
    for (const r of rows) {
      if (r.ended_at !== null && r.started_at < cutoff && !isPinned(r)) found.push(r);
    }
    if (rows.length < page) return found.sort((a, b) => a.started_at - b.started_at);
  }
}

/** `prune`: deletes ended sessions older than N days (children are kept, unlinked). */
export function pruneCommand(): Command {
  return withSelectionOptions(
    new Command("prune")
      .description(
        "delete ended sessions started more than N days ago (--dry-run lists them); never pinned ones",
      )
      .requiredOption("--older-than <days>", "age in days, by start time", parseNumber("--older-than")),
    { flagged: true },
  )
    .option("--dry-run", "list what would be deleted, delete nothing")
    .option("--json", "print the sessions as JSON")
    .action(async (o: PruneOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      await withStore(await openExisting(g), async (store) => {
        // One pass per selected source (the store's retention takes one source at a time).
        const sources: Array<string | undefined> = (await selectSources(store, o)) ?? [undefined];
        const visibility = visibilityOf(o);
        const list: SessionWithLastActive[] = [];
        let pruned = 0;
        if (narrows(o)) {
          // Filters the store's retention has not: its rule applied to the selected sessions,
          // which are then deleted one by one (children kept, unlinked, as pruning does).
          const selected = new Set((await selectedSessions(store, o))?.map((s) => s.id));
          list.push(...(await candidates(store, o.olderThan, visibility)).filter((s) => selected.has(s.id)));
          if (!o.dryRun) for (const s of list) if (await store.deleteSession(s.id)) pruned++;
        } else {
          for (const source of sources) {
            list.push(...(await candidates(store, o.olderThan, visibility, source)));
            if (!o.dryRun) {
              pruned += await store.pruneSessions({
                olderThanDays: o.olderThan,
                ...(source ? { source } : {}),
                ...visibility,
              });
            }
          }
        }
        list.sort((a, b) => a.started_at - b.started_at);
        const only =
          o.source !== undefined || o.excludeSource !== undefined
            ? sources.filter((s) => s !== undefined)
            : null;
        if (o.json) {
          return printJson({
            dryRun: o.dryRun === true,
            olderThanDays: o.olderThan,
            ...(only !== null ? { sources: only } : {}),
            pruned,
            sessions: list.map((s) => ({
              id: s.id,
              title: s.title,
              source: s.source,
              started_at: s.started_at,
            })),
          });
        }
        const style = createStyle(wantsColor(process.stdout, g.color));
        if (list.length > 0) {
          const table = renderTable(
            [
              { header: "ID", minWidth: Number.POSITIVE_INFINITY },
              { header: "TITLE", maxWidth: 30, minWidth: 10 },
              { header: "SOURCE" },
              { header: "STARTED" },
              { header: "MSGS", align: "right" },
            ],
            list.map((s) => [
              s.id,
              s.title ?? "",
              s.source,
              formatTime(s.started_at),
              formatCount(s.message_count),
            ]),
            style,
            outputWidth(),
          );
          process.stdout.write(`${table}\n`);
        }
        const from = only === null ? "" : only.length === 0 ? " from no source" : ` from ${only.join(", ")}`;
        const n = o.dryRun ? list.length : pruned;
        const what = `${countOf(n, "ended session")} started more than ${countOf(o.olderThan, "day")} ago${from}`;
        process.stdout.write(o.dryRun ? `Would delete ${what} (dry run).\n` : `Deleted ${what}.\n`);
      });
    });
}
