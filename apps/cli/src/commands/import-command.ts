import { accessSync, constants, statSync } from "node:fs";
import type { ImportReport } from "@hermes/store";
import { Command, Option } from "commander";
import { CliError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { openOrCreate, withStore } from "../open-database.js";
import { printJson } from "../write-output.js";

interface ImportOptions {
  onConflict: "skip" | "replace";
  skipInvalid?: boolean;
  detach?: boolean;
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

function describe(r: ImportReport): string {
  const lines = [
    `Imported ${r.sessionsImported} session(s) with ${r.messagesImported} message(s); ` +
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
  return lines.join("\n");
}

/** `import`: reads a JSONL export into the database; validated and idempotent. */
export function importCommand(): Command {
  return new Command("import")
    .description("import sessions from a JSONL export (validated; importing twice adds nothing)")
    .argument("<file>", "a .jsonl file written by `export`")
    .addOption(
      new Option("--on-conflict <mode>", "a session that exists with other content: skip or replace")
        .choices(["skip", "replace"])
        .default("skip"),
    )
    .option("--skip-invalid", "import the valid lines and list the bad ones (default: reject the file)")
    .option("--detach", "import sessions whose parent is missing, without the link")
    .option("--json", "print the import report as JSON")
    .action(async (file: string, o: ImportOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      requireReadableFile(file);
      await withStore(await openOrCreate(g), async (store) => {
        const report = await store.importSessions(file, {
          onConflict: o.onConflict,
          onInvalid: o.skipInvalid ? "skip" : "abort",
          missingParent: o.detach ? "detach" : "reject",
        });
        if (o.json) return printJson(report);
        process.stdout.write(`${describe(report)}\n`);
      });
    });
}
