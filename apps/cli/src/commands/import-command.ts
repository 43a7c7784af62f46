import {
  accessSync,
  closeSync,
  constants,
  createReadStream,
  existsSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
} from "node:fs";
import { createInterface } from "node:readline";
import type { ImportReport, ImportSource } from "@hermes/store";
import { Command, Option } from "commander";
import { CliError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { isPostgresUrl, locateDatabase, openOrCreate, withStore } from "../open-database.js";
import { countOf } from "../render/plural.js";
import { printJson } from "../write-output.js";

interface ImportOptions {
  onConflict: "skip" | "replace";
  skipInvalid?: boolean;
  detach?: boolean;
  includeArchived?: boolean;
  includeHidden?: boolean;
  json?: boolean;
}

/** Checks the file before opening the database, so a typo never creates an empty state.db. */
function requireReadableFile(file: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch {
    throw new CliError(`Cannot read ${file}: no such file`);
  }
  if (!isFile) throw new CliError(`Cannot read ${file}: not a regular file`);
  try {
    accessSync(file, constants.R_OK);
  } catch {
    throw new CliError(`Cannot read ${file}: permission denied`);
  }
}

/** The first character of a file that is not whitespace (`{` for JSONL, `[` for a JSON array). */
function firstCharacter(file: string): string | undefined {
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(4096);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    return /\S/.exec(buffer.toString("utf8", 0, n))?.[0];
  } finally {
    closeSync(fd);
  }
}

/**
 * The sessions of a JSON array (`export --format json`), one at a time. That export writes
 * one session per line (`[`, `{…},`, …, `]`), read here line by line in constant memory; any
 * other layout (a pretty-printed file) is parsed whole.
 */
async function* jsonArraySessions(file: string): AsyncGenerator<unknown> {
  const lines = createInterface({
    input: createReadStream(file, { encoding: "utf8" }),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let n = 0;
  let lineShaped = false;
  for await (const raw of lines) {
    n++;
    const line = raw.trim();
    if (n === 1) {
      lineShaped = line === "[" || line === "[]";
      if (!lineShaped) break;
      continue;
    }
    if (line === "]" || line === "") continue;
    const text = line.endsWith(",") ? line.slice(0, -1) : line;
    let item: unknown;
    try {
      item = JSON.parse(text);
    } catch (error) {
      // Not one session per line from the start: another layout, parsed whole below.
      if (n === 2) {
        lineShaped = false;
        break;
      }
      throw new CliError(`Cannot import ${file}: line ${n} is not valid JSON (${(error as Error).message})`);
    }
    yield item;
  }
  lines.close();
  if (lineShaped) return;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new CliError(`Cannot import ${file}: not valid JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(value))
    throw new CliError(`Cannot import ${file}: a JSON export is an array of sessions`);
  yield* value;
}

/** Removes a database file this run created, with its sidecars, after a failed import. */
function removeCreatedDatabase(path: string): void {
  for (const p of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`, `${path}-writers`]) {
    rmSync(p, { recursive: true, force: true });
  }
}

function describe(r: ImportReport): string {
  const lines = [
    `Imported ${countOf(r.sessionsImported, "session")} with ${countOf(r.messagesImported, "message")}; ` +
      `${r.sessionsUnchanged} already present and unchanged` +
      (r.sessionsReplaced > 0 ? `; ${r.sessionsReplaced} replaced` : "") +
      ".",
  ];
  for (const c of r.conflicts) {
    lines.push(
      `conflict: line ${c.line}: ${c.id} exists with different content; kept (use --on-conflict replace)`,
    );
  }
  for (const d of r.detached)
    lines.push(`detached: line ${d.line}: ${d.id} imported without its missing parent`);
  for (const i of r.invalid) lines.push(`skipped: line ${i.line}: ${i.message}`);
  const flagged = (reason: string) => r.skipped.filter((s) => s.reason === reason).length;
  if (flagged("archived") > 0) {
    lines.push(
      `skipped: ${countOf(flagged("archived"), "archived session")} (use --include-archived to import them)`,
    );
  }
  if (flagged("hidden") > 0) {
    lines.push(
      `skipped: ${countOf(flagged("hidden"), "hidden session")} (use --include-hidden to import them)`,
    );
  }
  const leftOut = Object.entries(r.leftOut);
  if (leftOut.length > 0) {
    const parts = leftOut.map(([field, n]) => leftOutPhrase(field, n));
    lines.push(`left out (this database cannot hold them): ${parts.join(", ")}`);
  }
  return lines.join("\n");
}

/** One entry of `ImportReport.leftOut` in words: "4 superseded messages", "pinned on 2 sessions". */
function leftOutPhrase(field: string, n: number): string {
  if (field === "messages.superseded") {
    return `${countOf(n, "superseded message")} (rewound or replaced)`;
  }
  const [table, name] = field.split(".");
  return `${name} on ${countOf(n, table === "sessions" ? "session" : "message")}`;
}

/** `import`: reads a JSONL export into the database; validated and idempotent. */
export function importCommand(): Command {
  return new Command("import")
    .description("import sessions from an export, JSONL or JSON (validated; importing twice adds nothing)")
    .argument("<file>", "a file written by `export` (--format jsonl or json)")
    .addOption(
      new Option("--on-conflict <mode>", "a session that exists with other content: skip or replace")
        .choices(["skip", "replace"])
        .default("skip"),
    )
    .option("--skip-invalid", "import the valid lines and list the bad ones (default: reject the file)")
    .option("--detach", "import sessions whose parent is missing, without the link")
    .option("--include-archived", "also import sessions the export flags archived (skipped by default)")
    .option("--include-hidden", "also import sessions the export flags hidden (skipped by default)")
    .option("--json", "print the import report as JSON")
    .action(async (file: string, o: ImportOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      requireReadableFile(file);
      const source: ImportSource = firstCharacter(file) === "[" ? jsonArraySessions(file) : file;
      const location = locateDatabase(g);
      const created = !isPostgresUrl(location.path) && !existsSync(location.path);
      let report: ImportReport;
      try {
        report = await withStore(await openOrCreate(g), (store) =>
          store.importSessions(source, {
            onConflict: o.onConflict,
            onInvalid: o.skipInvalid ? "skip" : "abort",
            missingParent: o.detach ? "detach" : "reject",
            includeArchived: o.includeArchived === true,
            includeHidden: o.includeHidden === true,
          }),
        );
      } catch (error) {
        // A rejected file leaves no new database behind (nothing of it was written anyway).
        if (created) removeCreatedDatabase(location.path);
        throw error;
      }
      if (o.json) return printJson(report);
      process.stdout.write(`${describe(report)}\n`);
    });
}
