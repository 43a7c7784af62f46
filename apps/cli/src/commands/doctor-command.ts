import { existsSync, lstatSync, statSync } from "node:fs";
import { dirname } from "node:path";
import type { SessionStore as AnyStore, SideIndexStatus } from "@hermes/core";
import { SCHEMA_VERSION } from "@hermes/schema";
import type { SearchIndexReport } from "@hermes/search";
import { openSessionStore, type SessionStore, whyNotWritable } from "@hermes/store";
import { Command } from "commander";
import { CliError, errorLine } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { loadPostgres } from "../load-postgres.js";
import {
  isPostgresUrl,
  locateDatabase,
  openFileReadOnly,
  openPostgres,
  requireExisting,
} from "../open-database.js";
import { formatBytes } from "../render/format-time.js";
import { countOf } from "../render/plural.js";
import { createProgress } from "../render/progress.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
import { foreignFile } from "../unusable-file.js";
import { printJson } from "../write-output.js";

/** One finding of `doctor`. */
export interface DoctorCheck {
  name: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

const mode = (m: number) => `0${(m & 0o777).toString(8)}`;

function fileChecks(path: string): DoctorCheck[] {
  const checks: DoctorCheck[] = [];
  for (const p of [path, `${path}-wal`, `${path}-shm`]) {
    if (!existsSync(p) && p !== path) continue;
    const l = lstatSync(p);
    if (l.isSymbolicLink()) {
      checks.push({ name: `file ${p}`, status: "fail", detail: "is a symbolic link (the store refuses it)" });
      continue;
    }
    const open = (l.mode & 0o077) !== 0;
    checks.push({
      name: `permissions ${p.slice(path.length) || "state.db"}`,
      status: open ? "warn" : "ok",
      detail: `${mode(l.mode)}${open ? ` (readable by others; fix with chmod 600 ${p})` : ""}`,
    });
  }
  const dir = dirname(path);
  const d = statSync(dir);
  checks.push({
    name: "permissions directory",
    status: (d.mode & 0o077) !== 0 ? "warn" : "ok",
    detail: `${dir} ${mode(d.mode)}${(d.mode & 0o077) !== 0 ? ` (others can list it; chmod 700 ${dir})` : ""}`,
  });
  const size = statSync(path).size;
  const wal = existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0;
  checks.push({ name: "size", status: "ok", detail: `database ${formatBytes(size)}` });
  checks.push({
    name: "wal size",
    status: wal > 64 * 1024 * 1024 ? "warn" : "ok",
    detail: `${formatBytes(wal)}${wal > 64 * 1024 * 1024 ? " (large: a reader may hold an old snapshot)" : ""}`,
  });
  return checks;
}

/** The schema version check: ours, a newer agent's (read with its rules, never written), or old. */
function schemaCheck(path: string, version: number | null): DoctorCheck {
  if (version === SCHEMA_VERSION) return { name: "schema version", status: "ok", detail: `v${version}` };
  if (version === null) {
    // Someone else's file is said to be so, as every command says it (migrate cannot help).
    return {
      name: "schema version",
      status: "fail",
      detail: foreignFile(path) ?? "no schema_version row (run 'hermes-sessions migrate')",
    };
  }
  if (version > SCHEMA_VERSION) {
    return {
      name: "schema version",
      status: "warn",
      detail: `v${version}, written by a newer Hermes Agent than this tool's v${SCHEMA_VERSION}: read with the agent's rules, never written`,
    };
  }
  return {
    name: "schema version",
    status: "fail",
    detail: `v${version} (run 'hermes-sessions migrate' to upgrade to v${SCHEMA_VERSION})`,
  };
}

/**
 * Checks that only read, through a read-only handle that leaves no trace (no `-wal`/`-shm`,
 * no mode change), so that what `doctor` reports is the file as it was.
 */
function readOnlyChecks(path: string): { checks: DoctorCheck[]; version: number | null } {
  const checks: DoctorCheck[] = [];
  const file = openFileReadOnly(path);
  const db = file.db;
  try {
    const profile = file.profile;
    checks.push(schemaCheck(path, profile.schemaVersion));
    checks.push({
      name: "journal mode",
      status: "ok",
      detail:
        profile.journalMode === "wal"
          ? "wal"
          : "rollback journal (a newer agent keeps its file out of WAL where SQLite has the WAL-reset bug)",
    });
    const blocker = whyNotWritable(path);
    const newer = profile.newer;
    checks.push({
      name: "access",
      status: "ok",
      detail:
        blocker !== null
          ? `read-only for this user: ${blocker}`
          : newer
            ? "read-only for this tool (a newer agent's file)"
            : "read-write",
    });
    if (file.note !== null) checks.push({ name: "visibility", status: "warn", detail: file.note });
    const sqlite = (db.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v;
    checks.push({ name: "sqlite", status: "ok", detail: sqlite });
    const integrity = (db.pragma("integrity_check(20)") as Array<{ integrity_check: string }>).map(
      (r) => r.integrity_check,
    );
    const intact = integrity.length === 1 && integrity[0] === "ok";
    checks.push({ name: "integrity_check", status: intact ? "ok" : "fail", detail: integrity.join("; ") });
    if (profile.tables.has("sessions")) {
      const dupes = db
        .prepare(
          "SELECT title, COUNT(*) AS n FROM sessions WHERE title IS NOT NULL GROUP BY title HAVING COUNT(*) > 1 LIMIT 5",
        )
        .all() as Array<{ title: string; n: number }>;
      checks.push({
        name: "unique titles",
        status: dupes.length === 0 ? "ok" : "warn",
        detail: dupes.length === 0 ? "no duplicates" : dupes.map((d) => `'${d.title}' ×${d.n}`).join(", "),
      });
      // A newer agent counts its active rows only (rewound and compacted rows are kept, inactive).
      const counted = profile.features.visibility ? " AND m.active = 1" : "";
      const drift = db
        .prepare(
          `SELECT COUNT(*) AS n FROM sessions s
           WHERE COALESCE(s.message_count, 0) != (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id${counted})`,
        )
        .get() as { n: number };
      checks.push({
        name: "message counters",
        status: drift.n === 0 ? "ok" : "warn",
        detail:
          drift.n === 0
            ? "match the rows"
            : `${countOf(drift.n, "session")} whose message_count differs from their rows`,
      });
    }
    return { checks, version: profile.schemaVersion };
  } finally {
    file.close();
  }
}

/**
 * Turns the store's `verifySearchIndex()` report (`{ ok, indexes: [{ name, kind, status,
 * detail?, pending? }] }`) into checks. Only `missing` and `damaged` fail: an extra index that
 * is behind, building or not built yet catches up by itself before its next use. With
 * `sideIndexed`, an index of kind `short-cjk` that is not built is left to the side index's own
 * check ({@link cjkSideIndexCheck}), which says the same and more: one line, not two.
 */
function searchReportChecks(report: SearchIndexReport, sideIndexed = false): DoctorCheck[] {
  const shown = report.indexes.filter(
    (i) => !(sideIndexed && i.kind === "short-cjk" && i.status === "not-built"),
  );
  return shown.map((i) => {
    const status = i.status;
    const words: Record<string, string> = {
      ok: "consistent with messages",
      // A side index counts queued changes; PostgreSQL's word index is behind its seal mark.
      behind:
        i.pending === undefined
          ? "behind"
          : `${countOf(i.pending, "queued change")}, applied before its next use`,
      building: "build interrupted, resumed before its next use",
      "not-built": "not built yet (created on the first short CJK search)",
      missing: "missing (run doctor --repair)",
      damaged: "damaged (run doctor --repair)",
    };
    return {
      name: `search index ${i.name} (${i.kind})`,
      status: status === "missing" || status === "damaged" ? "fail" : status === "building" ? "warn" : "ok",
      // A read-only check says itself how far it went (no comparison with messages).
      detail:
        status === "ok" && i.detail !== undefined
          ? i.detail
          : [words[status] ?? status, i.detail].filter(Boolean).join(": "),
    };
  });
}

/**
 * The short-CJK side index as the store's `stats().sideIndexes.cjk` reports it: its state and
 * how far it is built. A build under way or interrupted is a warning (searches scan until it is
 * ready, with the same hits); a writable store resumes it on its next short CJK search.
 * `readOnlyBecause`: why this tool can never build it in this file (a newer agent's file, or
 * one this user cannot write), so that the advice says what is true here; `null` when it can.
 */
export function cjkSideIndexCheck(cjk: SideIndexStatus, readOnlyBecause: string | null = null): DoctorCheck {
  const n = (x: number) => x.toLocaleString("en-US");
  const queued = cjk.pendingChanges > 0 ? `, ${countOf(cjk.pendingChanges, "queued change")}` : "";
  const failed = cjk.lastError === null ? "" : `; last build stopped: ${cjk.lastError}`;
  const name = "side index short-CJK";
  if (cjk.state === "absent" && readOnlyBecause !== null) {
    return {
      name,
      status: "ok",
      detail: `not built, and never built here: ${readOnlyBecause}; searches of 1–2-character CJK terms scan the messages instead (the same hits, slower)`,
    };
  }
  if (cjk.state === "absent") {
    return {
      name,
      status: "ok",
      detail: `not built yet (built on a worker thread at the first 1–2-character CJK search; ${countOf(cjk.totalRows, "message")} to index)`,
    };
  }
  if (cjk.state === "ready") {
    return {
      name,
      status: "ok",
      detail: `ready: ${countOf(cjk.indexedRows, "message")} indexed${queued}${failed}`,
    };
  }
  const pct = cjk.totalRows === 0 ? 100 : Math.floor((100 * cjk.indexedRows) / cjk.totalRows);
  return {
    name,
    status: "warn",
    detail:
      `building: ${n(cjk.indexedRows)} of ${countOf(cjk.totalRows, "message")} (${pct}%)${queued}; ` +
      `${cjk.active ? "under way" : "resumes at the next short CJK search of a writable store"}, searches scan meanwhile${failed}`,
  };
}

/**
 * `doctor --db postgres://…`: the schema version, which index method serves search (a note
 * when RUM is missing: search works on GIN, slower), and the search indexes.
 */
async function postgresChecks(url: string, repairIt: boolean): Promise<DoctorCheck[]> {
  const { PostgresSessionStore, RUM_MISSING } = await loadPostgres();
  const store = await openPostgres(url, { readOnly: !repairIt });
  try {
    const checks: DoctorCheck[] = [];
    if (store instanceof PostgresSessionStore) {
      const m = store.migration;
      checks.push({
        name: "schema version",
        status: m.newerVersion ? "warn" : "ok",
        detail: `v${m.toVersion}${m.applied.length > 0 ? ` (upgraded from ${m.fromVersion === null ? "empty" : `v${m.fromVersion}`})` : ""}`,
      });
    }
    if (repairIt) await repair(store);
    if (store instanceof PostgresSessionStore) {
      const rum = store.searchMethod === "rum";
      checks.push({
        name: "search index method",
        status: rum ? "ok" : "warn",
        detail: rum
          ? "RUM: ranked searches read the top hits of each sealed id range off its RUM index (the newest messages off a GIN index, sealed every 20,000 or so)"
          : `GIN: ${RUM_MISSING}`,
      });
    }
    checks.push(...searchReportChecks(await store.verifySearchIndex()));
    return checks;
  } finally {
    await store.close();
  }
}

async function repair(store: Pick<AnyStore, "rebuildSearchIndex">): Promise<void> {
  const progress = createProgress("rebuilding search indexes");
  try {
    await store.rebuildSearchIndex({ onProgress: (p) => progress.update(p.done, p.total, p.index) });
  } finally {
    progress.finish();
  }
}

/**
 * Why this tool can never build its short-CJK index in the file at `path`, or `null` when a
 * writable open would (on its first short CJK search).
 */
function neverBuilt(path: string, version: number | null): string | null {
  if (version !== null && version > SCHEMA_VERSION) {
    return `the file belongs to a newer Hermes Agent (schema ${version}), which this tool never writes`;
  }
  const blocker = whyNotWritable(path);
  return blocker === null ? null : `this user cannot write the file (${blocker})`;
}

/** `doctor`: checks the file, schema, integrity, search indexes and permissions. */
export function doctorCommand(): Command {
  return new Command("doctor")
    .description("check the database: schema, integrity, search indexes, WAL, permissions")
    .option("--repair", "rebuild the search indexes (with progress)")
    .option("--json", "print the checks as JSON")
    .action(async (o: { repair?: boolean; json?: boolean }, cmd: Command) => {
      const g = globalOptions(cmd);
      const location = locateDatabase(g);
      if (isPostgresUrl(location.path)) {
        const checks = await postgresChecks(location.path, o.repair === true);
        return report(checks, new URL(location.path).host, o.repair === true, o.json === true, g.color);
      }
      requireExisting(location);
      const path = location.path;
      const checks = fileChecks(path);
      let version: number | null;
      try {
        const found = readOnlyChecks(path);
        checks.push(...found.checks);
        version = found.version;
      } catch (error) {
        if (error instanceof CliError) throw error;
        throw new CliError(`${path} cannot be checked: ${(error as Error).message}`, 1, { cause: error });
      }
      // The store is opened read-only (the search indexes are checked without writing) on a
      // v11 or newer file; for --repair, read-write, on a v11 file only: opening an old one
      // would upgrade it, and a newer agent's file is never written.
      const readable = version !== null && version >= SCHEMA_VERSION;
      if (o.repair && version !== SCHEMA_VERSION) {
        throw new CliError(
          version !== null && version > SCHEMA_VERSION
            ? `${path} has schema v${version} (a newer Hermes Agent's): repair it with that agent, not this tool`
            : "Run 'hermes-sessions migrate' before repairing search indexes",
        );
      }
      let store: SessionStore | null = null;
      let openError: string | null = null;
      if (readable) {
        try {
          store = await openSessionStore(o.repair ? { path, readOnly: false } : { path, readOnly: true });
        } catch (error) {
          // Reported as a failed check: the rest of the report is still worth reading.
          openError = errorLine(error);
        }
      }
      let repaired = false;
      try {
        if (openError !== null) {
          checks.push({ name: "open", status: "fail", detail: openError });
        } else if (store === null) {
          checks.push({ name: "search indexes", status: "warn", detail: "not checked below schema v11" });
        } else {
          if (o.repair) {
            await repair(store);
            repaired = true;
          }
          checks.push(...searchReportChecks(await store.verifySearchIndex(), true));
          checks.push(cjkSideIndexCheck(store.stats().sideIndexes.cjk, neverBuilt(path, version)));
        }
      } finally {
        await store?.close();
      }
      report(checks, path, repaired, o.json === true, g.color);
    });
}

/** Prints the checks (or JSON) and sets a failing exit code when one failed. */
function report(
  checks: DoctorCheck[],
  path: string,
  repaired: boolean,
  json: boolean,
  color: Parameters<typeof wantsColor>[1],
): void {
  const failed = checks.filter((c) => c.status === "fail").length;
  const warned = checks.filter((c) => c.status === "warn").length;
  if (json) {
    printJson({ path, ok: failed === 0, repaired, checks });
  } else {
    const style = createStyle(wantsColor(process.stdout, color));
    const mark = { ok: style.green("ok  "), warn: style.yellow("warn"), fail: style.red("FAIL") };
    const width = Math.max(...checks.map((c) => c.name.length));
    process.stdout.write(`${style.bold(path)}\n`);
    for (const c of checks)
      process.stdout.write(`  ${mark[c.status]}  ${c.name.padEnd(width)}  ${c.detail}\n`);
    if (repaired) process.stdout.write("Search indexes rebuilt.\n");
    process.stdout.write(
      failed === 0
        ? `${warned === 0 ? "All checks passed." : `All checks passed, ${countOf(warned, "warning")}.`}\n`
        : `${countOf(failed, "check")} failed.\n`,
    );
  }
  if (failed > 0) process.exitCode = 1;
}
