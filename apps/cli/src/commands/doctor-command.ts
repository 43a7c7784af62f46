import { existsSync, lstatSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { SCHEMA_VERSION } from "@hermes/schema";
import type { SearchIndexReport } from "@hermes/search";
import { openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { Command } from "commander";
import { CliError, errorLine } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { locateDatabase, peekSchemaVersion, requireExisting } from "../open-database.js";
import { formatBytes } from "../render/format-time.js";
import { createProgress } from "../render/progress.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
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

/** Checks that only read: they go through a read-only connection and never change the file. */
function readOnlyChecks(path: string): DoctorCheck[] {
  const checks: DoctorCheck[] = [];
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const version = peekSchemaVersion(path);
    checks.push({
      name: "schema version",
      status:
        version === SCHEMA_VERSION ? "ok" : version !== null && version > SCHEMA_VERSION ? "warn" : "fail",
      detail:
        version === SCHEMA_VERSION
          ? `v${version}`
          : version === null
            ? "no schema_version row (run 'hermes-sessions migrate')"
            : version > SCHEMA_VERSION
              ? `v${version}, newer than this tool's v${SCHEMA_VERSION}`
              : `v${version} (run 'hermes-sessions migrate' to upgrade to v${SCHEMA_VERSION})`,
    });
    const sqlite = (db.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v;
    checks.push({ name: "sqlite", status: "ok", detail: sqlite });
    const integrity = (db.pragma("integrity_check(20)") as Array<{ integrity_check: string }>).map(
      (r) => r.integrity_check,
    );
    const intact = integrity.length === 1 && integrity[0] === "ok";
    checks.push({ name: "integrity_check", status: intact ? "ok" : "fail", detail: integrity.join("; ") });
    const hasSessions = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name='sessions'")
      .get();
    if (hasSessions !== undefined) {
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
      const drift = db
        .prepare(
          `SELECT COUNT(*) AS n FROM sessions s
           WHERE COALESCE(s.message_count, 0) != (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)`,
        )
        .get() as { n: number };
      checks.push({
        name: "message counters",
        status: drift.n === 0 ? "ok" : "warn",
        detail:
          drift.n === 0
            ? "match the rows"
            : `${drift.n} session(s) whose message_count differs from their rows`,
      });
    }
    return checks;
  } finally {
    db.close();
  }
}

/**
 * Turns the store's `verifySearchIndex()` report (`{ ok, indexes: [{ name, kind, status,
 * detail?, pending? }] }`) into checks. Only `missing` and `damaged` fail: an extra index that
 * is behind, building or not built yet catches up by itself before its next use.
 */
function searchReportChecks(report: SearchIndexReport): DoctorCheck[] {
  return report.indexes.map((i) => {
    const status = i.status;
    const words: Record<string, string> = {
      ok: "consistent with messages",
      behind: `${i.pending ?? "some"} queued change(s), applied before its next use`,
      building: "build interrupted, resumed before its next use",
      "not-built": "not built yet (created on the first short CJK search)",
      missing: "missing (run doctor --repair)",
      damaged: "damaged (run doctor --repair)",
    };
    return {
      name: `search index ${i.name} (${i.kind})`,
      status: status === "missing" || status === "damaged" ? "fail" : status === "building" ? "warn" : "ok",
      detail: [words[status] ?? status, i.detail].filter(Boolean).join(": "),
    };
  });
}

async function repair(store: SessionStore): Promise<void> {
  const progress = createProgress("rebuilding search indexes");
  try {
    await store.rebuildSearchIndex({ onProgress: (p) => progress.update(p.done, p.total, p.index) });
  } finally {
    progress.finish();
  }
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
      requireExisting(location);
      const path = location.path;
      const checks = fileChecks(path);
      try {
        checks.push(...readOnlyChecks(path));
      } catch (error) {
        throw new CliError(`${path} cannot be checked: ${(error as Error).message}`, 1, { cause: error });
      }
      const current = peekSchemaVersion(path) === SCHEMA_VERSION;
      // The store is only opened on an up-to-date file: opening an old one would upgrade it.
      let store: SessionStore | null = null;
      let openError: string | null = null;
      if (current) {
        try {
          store = await openSessionStore({ path });
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
          if (o.repair) throw new CliError("Run 'hermes-sessions migrate' before repairing search indexes");
          checks.push({ name: "search indexes", status: "warn", detail: "not checked below schema v11" });
        } else {
          if (o.repair) {
            await repair(store);
            repaired = true;
          }
          checks.push(...searchReportChecks(await store.verifySearchIndex()));
        }
      } finally {
        await store?.close();
      }
      const failed = checks.filter((c) => c.status === "fail").length;
      const warned = checks.filter((c) => c.status === "warn").length;
      if (o.json) {
        printJson({ path, ok: failed === 0, repaired, checks });
      } else {
        const style = createStyle(wantsColor(process.stdout, g.color));
        const mark = { ok: style.green("ok  "), warn: style.yellow("warn"), fail: style.red("FAIL") };
        const width = Math.max(...checks.map((c) => c.name.length));
        process.stdout.write(`${style.bold(path)}\n`);
        for (const c of checks)
          process.stdout.write(`  ${mark[c.status]}  ${c.name.padEnd(width)}  ${c.detail}\n`);
        if (repaired) process.stdout.write("Search indexes rebuilt.\n");
        process.stdout.write(
          failed === 0
            ? `${warned === 0 ? "All checks passed." : `All checks passed, ${warned} warning(s).`}\n`
            : `${failed} check(s) failed.\n`,
        );
      }
      if (failed > 0) process.exitCode = 1;
    });
}
