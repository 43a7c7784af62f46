import { existsSync, lstatSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { SCHEMA_VERSION } from "@hermes/schema";
import { openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { Command } from "commander";
import { CliError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { locateDatabase, peekSchemaVersion, requireExisting } from "../open-database.js";
import { formatBytes } from "../render/format-time.js";
import { createProgressBar } from "../render/progress-bar.js";
import { createStyle, wantsColor } from "../render/terminal-style.js";
import { extension, hasExtension } from "../store-extensions.js";
import { printJson } from "../write-output.js";

/** One finding of `doctor`. */
export interface DoctorCheck {
  name: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

/** A search table found in the schema, with its CREATE statement. */
interface FtsTable {
  name: string;
  sql: string;
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
function readOnlyChecks(path: string): {
  checks: DoctorCheck[];
  ftsTables: Array<{ name: string; sql: string }>;
} {
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
    const ftsTables = db
      .prepare(
        "SELECT name, sql FROM sqlite_master WHERE type='table' AND sql LIKE 'CREATE VIRTUAL TABLE%fts5%' ORDER BY name",
      )
      .all() as Array<{ name: string; sql: string }>;
    return { checks, ftsTables };
  } finally {
    db.close();
  }
}

const quoteId = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * FTS5's own consistency check of each search table against `messages` (`rank` 1 compares
 * with the external content). It is spelled as an INSERT, so it runs in a transaction that is
 * always rolled back: nothing is written.
 */
function rawSearchChecks(path: string, tables: FtsTable[]): DoctorCheck[] {
  const db = new Database(path, { fileMustExist: true, timeout: 2000 });
  try {
    return tables.map(({ name: t, sql }) => {
      // A contentless table has nothing to compare with: check its own structure only.
      const contentless = /content\s*=\s*(''|"")/i.test(sql);
      db.exec("BEGIN");
      try {
        db.exec(
          `INSERT INTO ${quoteId(t)}(${quoteId(t)}${contentless ? "" : ", rank"}) VALUES('integrity-check'${contentless ? "" : ", 1"})`,
        );
        return { name: `search index ${t}`, status: "ok" as const, detail: "consistent with messages" };
      } catch (error) {
        return {
          name: `search index ${t}`,
          status: "fail" as const,
          detail: `${(error as Error).message} (run doctor --repair)`,
        };
      } finally {
        db.exec("ROLLBACK");
      }
    });
  } finally {
    db.close();
  }
}

/**
 * Turns the store's `verifySearchIndex()` report (`{ ok, indexes: [{ name, kind, status,
 * detail?, pending? }] }`) into checks. Only `missing` and `damaged` fail: an extra index that
 * is behind, building or not built yet catches up by itself before its next use.
 */
function searchReportChecks(report: unknown): DoctorCheck[] {
  const r = report as { indexes?: unknown[] } | unknown[];
  const items = Array.isArray(r) ? r : Array.isArray(r.indexes) ? r.indexes : [];
  return items.map((item) => {
    const i = item as { name?: string; kind?: string; status?: string; detail?: string; pending?: number };
    const status = i.status ?? "damaged";
    const words: Record<string, string> = {
      ok: "consistent with messages",
      behind: `${i.pending ?? "some"} queued change(s), applied before its next use`,
      building: "build interrupted, resumed before its next use",
      "not-built": "not built yet (created on the first short CJK search)",
      missing: "missing (run doctor --repair)",
      damaged: "damaged (run doctor --repair)",
    };
    return {
      name: `search index ${i.name ?? "?"}${i.kind ? ` (${i.kind})` : ""}`,
      status: status === "missing" || status === "damaged" ? "fail" : status === "building" ? "warn" : "ok",
      detail: [words[status] ?? status, i.detail].filter(Boolean).join(": "),
    };
  });
}

async function searchChecks(
  path: string,
  tables: FtsTable[],
  store: SessionStore | null,
): Promise<DoctorCheck[]> {
  if (store !== null && hasExtension(store, "verifySearchIndex")) {
    return searchReportChecks(await extension(store, "verifySearchIndex")());
  }
  return rawSearchChecks(path, tables);
}

async function repair(path: string, tables: FtsTable[], store: SessionStore | null): Promise<void> {
  const progress = createProgressBar("rebuilding search indexes");
  try {
    if (store !== null && hasExtension(store, "rebuildSearchIndex")) {
      await extension(
        store,
        "rebuildSearchIndex",
      )({
        onProgress: (p: unknown) => {
          const r = p as { done?: number; total?: number; table?: string; index?: string; rows?: number };
          progress.update(r.done ?? r.rows ?? 0, r.total, r.table ?? r.index);
        },
      });
      return;
    }
    const db = new Database(path, { fileMustExist: true, timeout: 5000 });
    try {
      tables.forEach(({ name: t }, i) => {
        progress.update(i, tables.length, t);
        db.exec("BEGIN IMMEDIATE");
        try {
          db.exec(`INSERT INTO ${quoteId(t)}(${quoteId(t)}) VALUES('rebuild')`);
          db.exec("COMMIT");
        } catch (error) {
          db.exec("ROLLBACK");
          throw error;
        }
      });
      progress.update(tables.length, tables.length);
    } finally {
      db.close();
    }
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
      let ro: ReturnType<typeof readOnlyChecks>;
      try {
        ro = readOnlyChecks(path);
      } catch (error) {
        throw new CliError(`${path} cannot be checked: ${(error as Error).message}`, 1, { cause: error });
      }
      checks.push(...ro.checks);
      const current = peekSchemaVersion(path) === SCHEMA_VERSION;
      // The store is only opened on an up-to-date file: opening an old one would upgrade it.
      const store = current ? await openSessionStore({ path }) : null;
      let repaired = false;
      try {
        let search = await searchChecks(path, ro.ftsTables, store);
        if (o.repair) {
          if (!current) throw new CliError("Run 'hermes-sessions migrate' before repairing search indexes");
          await repair(path, ro.ftsTables, store);
          repaired = true;
          search = await searchChecks(path, ro.ftsTables, store);
        }
        checks.push(...search);
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
