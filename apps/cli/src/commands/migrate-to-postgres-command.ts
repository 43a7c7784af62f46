import { realpathSync } from "node:fs";
import { type PortableSession, type SessionStore, SOURCE_SCHEMA_META_KEY } from "@hermes/core";
import { Command } from "commander";
import { CliError, usageError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { loadPostgres } from "../load-postgres.js";
import { isPostgresUrl, locateDatabase, openForReading, openPostgres, withStore } from "../open-database.js";
import { countOf } from "../render/plural.js";
import { createProgress } from "../render/progress.js";
import { printJson } from "../write-output.js";

interface MigrateToPostgresOptions {
  from?: string;
  to: string;
  json?: boolean;
}

/** Sessions (and at most this many messages) imported per transaction batch. */
const CHUNK_SESSIONS = 200;
const CHUNK_MESSAGES = 20_000;

/** What a run did. */
interface MigrationSummary {
  from: string;
  sessions: number;
  sessionsImported: number;
  sessionsUnchanged: number;
  /** Sessions before the resume cursor: copied by an earlier run, not read again (also in `sessionsUnchanged`). */
  sessionsSkipped: number;
  messagesImported: number;
  conflicts: number;
  /**
   * What PostgreSQL could not hold, by field (`ImportReport.leftOut`); empty: it holds the
   * flags, uids and view state of a newer agent's file, so archived and hidden sessions are
   * copied and stay out of its listings.
   */
  leftOut: Record<string, number>;
  resumedFrom: number | null;
  /** Wall time of the copy and its rate (messages copied per second). */
  elapsedMs: number;
  messagesPerSecond: number;
}

/**
 * The `state_meta` key (in PostgreSQL) holding how far a copy of this file got: the
 * `started_at` of the last session of the last committed chunk.
 */
function cursorKey(path: string): string {
  return `migrate_to_postgres:${realpathSync(path)}`;
}

/**
 * Records the file's schema version in PostgreSQL (`SOURCE_SCHEMA_META_KEY`) unless a newer one
 * is there: its JSONL exports name the version of the data it holds.
 */
async function noteSourceSchema(sqlite: SessionStore, pg: SessionStore): Promise<void> {
  const version = (sqlite as { access?: { schemaVersion?: number | null } }).access?.schemaVersion;
  if (typeof version !== "number") return;
  const recorded = Number(await pg.getMeta(SOURCE_SCHEMA_META_KEY));
  if (!(Number.isSafeInteger(recorded) && recorded >= version))
    await pg.setMeta(SOURCE_SCHEMA_META_KEY, String(version));
}

/**
 * Copies a state.db into PostgreSQL: streamed (one snapshot of the file, chunks of sessions
 * imported as they are read), resumable (a cursor in `state_meta` after each chunk; a rerun
 * starts at the cursor) and idempotent (sessions already copied are recognised and skipped).
 */
async function migrate(
  sqlite: SessionStore,
  pg: SessionStore,
  path: string,
  onProgress: (done: number, total: number) => void,
): Promise<MigrationSummary> {
  const started = performance.now();
  const key = cursorKey(path);
  const saved = await pg.getMeta(key);
  const resumedFrom = saved === null ? null : Number(saved);
  const since = resumedFrom !== null && Number.isFinite(resumedFrom) ? resumedFrom : undefined;
  const total = await sqlite.sessionCount();
  const summary: MigrationSummary = {
    from: path,
    sessions: 0,
    sessionsImported: 0,
    sessionsUnchanged: 0,
    sessionsSkipped: 0,
    messagesImported: 0,
    conflicts: 0,
    leftOut: {},
    resumedFrom,
    elapsedMs: 0,
    messagesPerSecond: 0,
  };
  // Into an empty store the rows go in without search indexes, built once at the end (much
  // faster than maintaining them row by row); a rerun builds whatever is missing.
  const { PostgresSessionStore } = await loadPostgres();
  const bulk = pg instanceof PostgresSessionStore ? pg : null;
  if (bulk !== null) await bulk.deferSearchIndexes();
  await noteSourceSchema(sqlite, pg);
  let skipped = 0;
  if (since !== undefined) {
    // Sessions started before the cursor were copied by an earlier run.
    for (const row of await sqlite.usageStats({ groupBy: "source", until: since })) skipped += row.sessions;
  }
  const deferred: PortableSession[] = [];
  // Archived and hidden sessions are copied with their flags: PostgreSQL lists them as the agent does.
  const keepFlagged = { includeArchived: true, includeHidden: true } as const;
  const addLeftOut = (leftOut: Record<string, number>) => {
    for (const [field, n] of Object.entries(leftOut))
      summary.leftOut[field] = (summary.leftOut[field] ?? 0) + n;
  };
  const flush = async (chunk: PortableSession[]) => {
    if (chunk.length === 0) return;
    const report = await pg.importSessions(chunk, { onInvalid: "skip", ...keepFlagged });
    addLeftOut(report.leftOut);
    summary.sessionsImported += report.sessionsImported;
    summary.sessionsUnchanged += report.sessionsUnchanged;
    summary.messagesImported += report.messagesImported;
    summary.conflicts += report.conflicts.length;
    // A child started before its parent (clock skew): tried again once every parent is in.
    for (const bad of report.invalid) {
      const s = chunk[bad.line - 1];
      if (s !== undefined) deferred.push(s);
    }
    summary.sessions += chunk.length - report.invalid.length;
    await pg.setMeta(key, String(chunk[chunk.length - 1]!.started_at));
    onProgress(skipped + summary.sessions + deferred.length, total);
  };
  let chunk: PortableSession[] = [];
  let messages = 0;
  for await (const s of sqlite.exportStream(since === undefined ? {} : { since })) {
    chunk.push(s);
    messages += s.messages.length;
    if (chunk.length >= CHUNK_SESSIONS || messages >= CHUNK_MESSAGES) {
      await flush(chunk);
      chunk = [];
      messages = 0;
    }
  }
  await flush(chunk);
  if (deferred.length > 0) {
    const report = await pg.importSessions(deferred.splice(0), { onInvalid: "abort", ...keepFlagged });
    addLeftOut(report.leftOut);
    summary.sessionsImported += report.sessionsImported;
    summary.sessionsUnchanged += report.sessionsUnchanged;
    summary.messagesImported += report.messagesImported;
    summary.sessions += report.sessionsImported + report.sessionsUnchanged + report.conflicts.length;
  }
  // Copied by an earlier run (the cursor says so): already there, like those read again.
  summary.sessions += skipped;
  summary.sessionsSkipped = skipped;
  summary.sessionsUnchanged += skipped;
  onProgress(total, total);
  if (bulk !== null) await bulk.buildSearchIndexes();
  summary.elapsedMs = Math.round(performance.now() - started);
  summary.messagesPerSecond = Math.round(
    summary.messagesImported / Math.max(summary.elapsedMs / 1000, 0.001),
  );
  return summary;
}

/** `migrate-to-postgres`: copies a state.db into a PostgreSQL store (streaming, resumable, idempotent). */
export function migrateToPostgresCommand(): Command {
  return new Command("migrate-to-postgres")
    .description(
      "copy a state.db into PostgreSQL (streaming, with progress; rerun to resume, nothing is copied twice)",
    )
    .option(
      "--from <state.db>",
      "the SQLite file to copy, read-only: nothing beside it changes (default: --db, else the default state.db)",
    )
    .requiredOption("--to <url>", "postgres://user@host:port/db (add ?schema=name for a schema)")
    .option("--json", "print the summary as JSON")
    .action(async (o: MigrateToPostgresOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      if (!isPostgresUrl(o.to)) throw usageError(`--to must be a postgres:// URL (got ${o.to})`);
      const from = o.from ?? g.db;
      if (from !== undefined && isPostgresUrl(from)) throw usageError("--from must be a state.db file");
      // Read-only, as every reading command: the source's bytes, mode and folder stay as they
      // are (it may be a live agent's or another user's file).
      const sqlite = await openForReading({ ...g, db: from });
      const progress = createProgress("copying sessions");
      let summary: MigrationSummary;
      try {
        const path = locateDatabase({ ...g, db: from }).path;
        summary = await withStore(await openPostgres(o.to), (pg) =>
          migrate(sqlite, pg, path, (done, total) => progress.update(done, total)),
        );
      } catch (error) {
        if (error instanceof CliError) throw error;
        throw new CliError(`migrate-to-postgres failed: ${(error as Error).message}; rerun to resume`, 1, {
          cause: error,
        });
      } finally {
        progress.finish();
        await sqlite.close();
      }
      if (o.json) return printJson(summary);
      process.stdout.write(
        `Copied ${summary.from} to PostgreSQL: ${countOf(summary.sessions, "session")}; ` +
          `${summary.sessionsImported} new (${countOf(summary.messagesImported, "message")}), ` +
          `${summary.sessionsUnchanged} already there` +
          (summary.conflicts > 0 ? `, ${summary.conflicts} kept as they were (different content)` : "") +
          ` in ${(summary.elapsedMs / 1000).toFixed(1)} s (${summary.messagesPerSecond.toLocaleString("en-US")} messages/s).\n`,
      );
    });
}
