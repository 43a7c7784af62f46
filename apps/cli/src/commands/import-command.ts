import { accessSync, constants, statSync } from "node:fs";
import { Command } from "commander";
import { CliError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { openOrCreate, withStore } from "../open-database.js";
import { createProgressBar } from "../render/progress-bar.js";
import { extension } from "../store-extensions.js";
import { printJson } from "../write-output.js";

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

function describe(result: unknown): string {
  if (typeof result !== "object" || result === null) return "Import done.";
  const parts = Object.entries(result as Record<string, unknown>)
    .filter(([, v]) => typeof v === "number")
    .map(([k, v]) => `${k.replace(/([A-Z])/g, " $1").toLowerCase()}: ${v}`);
  return parts.length > 0 ? `Imported (${parts.join(", ")})` : "Import done.";
}

/** `import`: reads a JSONL export into the database; validated and idempotent. */
export function importCommand(): Command {
  return new Command("import")
    .description("import sessions from a JSONL export (validated; importing twice adds nothing)")
    .argument("<file>", "a .jsonl file written by `export`")
    .option("--json", "print the counts as JSON")
    .action(async (file: string, o: { json?: boolean }, cmd: Command) => {
      const g = globalOptions(cmd);
      requireReadableFile(file);
      await withStore(await openOrCreate(g), async (store) => {
        const progress = createProgressBar("importing");
        let result: unknown;
        try {
          result = await extension(store, "importSessions")(file, {
            onProgress: (p: unknown) => {
              const r = p as { sessions?: number; lines?: number; line?: number };
              progress.update(r.sessions ?? r.lines ?? r.line ?? 0);
            },
          });
        } finally {
          progress.finish();
        }
        if (o.json) return printJson(result);
        process.stdout.write(`${describe(result)}\n`);
      });
    });
}
