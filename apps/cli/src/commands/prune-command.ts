import type { SessionStore, SessionWithLastActive } from "@hermes/core";
import { Command } from "commander";
import { globalOptions } from "../global-options.js";
import { openExisting, withStore } from "../open-database.js";
import { parseNumber } from "../parse-options.js";
import { formatCount, formatTime } from "../render/format-time.js";
import { renderTable } from "../render/table.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
import { printJson } from "../write-output.js";

interface PruneOptions {
  olderThan: number;
  source?: string;
  dryRun?: boolean;
  json?: boolean;
}

/**
 * The sessions `pruneSessions` would delete, by the reference's rule: ended, and started more
 * than `days` ago (active sessions are never pruned).
 */
async function candidates(
  store: SessionStore,
  days: number,
  source?: string,
): Promise<SessionWithLastActive[]> {
  const cutoff = Date.now() / 1000 - days * 86_400;
  const found: SessionWithLastActive[] = [];
  const page = 500;
  for (let offset = 0; ; offset += page) {
    const rows = await store.searchSessions({ ...(source ? { source } : {}), limit: page, offset });
    for (const r of rows) if (r.ended_at !== null && r.started_at < cutoff) found.push(r);
    if (rows.length < page) return found.sort((a, b) => a.started_at - b.started_at);
  }
}

/** `prune`: deletes ended sessions older than N days (children are kept, unlinked). */
export function pruneCommand(): Command {
  return new Command("prune")
    .description("delete ended sessions started more than N days ago (--dry-run lists them)")
    .requiredOption("--older-than <days>", "age in days, by start time", parseNumber("--older-than"))
    .option("-s, --source <source>", "only sessions from this source")
    .option("--dry-run", "list what would be deleted, delete nothing")
    .option("--json", "print the sessions as JSON")
    .action(async (o: PruneOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      await withStore(await openExisting(g), async (store) => {
        const list = await candidates(store, o.olderThan, o.source);
        const pruned = o.dryRun
          ? 0
          : await store.pruneSessions({
              olderThanDays: o.olderThan,
              ...(o.source ? { source: o.source } : {}),
            });
        if (o.json) {
          return printJson({
            dryRun: o.dryRun === true,
            olderThanDays: o.olderThan,
            ...(o.source ? { source: o.source } : {}),
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
              { header: "ID" },
              { header: "TITLE", maxWidth: 30 },
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
          );
          process.stdout.write(`${table}\n`);
        }
        const what = `ended session(s) started more than ${o.olderThan} day(s) ago${o.source ? ` from ${o.source}` : ""}`;
        process.stdout.write(
          o.dryRun ? `Would delete ${list.length} ${what} (dry run).\n` : `Deleted ${pruned} ${what}.\n`,
        );
      });
    });
}
