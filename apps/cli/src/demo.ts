import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveStatePath } from "@hermes/store";
import { seedDemoDatabase } from "./demo/seed-demo-database.js";
import { countOf } from "./render/plural.js";

// `pnpm demo`: a guided tour of hermes-sessions on a throwaway database. HERMES_HOME points at
// a temporary directory for this process and every command it runs, so ~/.hermes is never
// read or written.

const main = join(dirname(fileURLToPath(import.meta.url)), "main.js");
const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
const bold = (s: string) => (color ? `\x1b[1m${s}\x1b[22m` : s);
const dim = (s: string) => (color ? `\x1b[2m${s}\x1b[22m` : s);
const quote = (a: string) => (/^[\w./:=#-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);

let failures = 0;

/** Prints the command line, then runs the real CLI with the terminal as its output. */
function run(note: string, args: string[]): void {
  process.stdout.write(`\n${dim(`# ${note}`)}\n${bold(`$ hermes-sessions ${args.map(quote).join(" ")}`)}\n`);
  const r = spawnSync(process.execPath, [main, ...args], { stdio: "inherit", env: process.env });
  if (r.status !== 0) {
    failures++;
    process.stdout.write(dim(`(exit code ${r.status})\n`));
  }
}

const home = mkdtempSync(join(tmpdir(), "hermes-demo-"));
process.env.HERMES_HOME = home;
try {
  const path = resolveStatePath();
  const seeded = await seedDemoDatabase(path);
  process.stdout.write(
    `${bold("hermes-sessions demo")}\n` +
      `HERMES_HOME=${home} (temporary; your ~/.hermes is not touched)\n` +
      `Seeded ${path}: ${countOf(seeded.sessions, "session")}, ${countOf(seeded.messages, "message")} ` +
      "(cli, telegram, discord, cron; a compressed session, a delegated sub-agent, Chinese text).\n",
  );
  const exportFile = join(home, "backup.jsonl");
  run("Newest first; the compressed Docker fix shows as its latest part", ["list"]);
  run("A title finds the newest session of its lineage ('Fix Docker build' -> '#2')", [
    "show",
    "Fix Docker build",
  ]);
  run("Tool calls, tool results and folded reasoning (a unique id prefix is enough)", [
    "show",
    seeded.ids.dockerRoot.slice(0, 15),
  ]);
  run("Full-text search, with the session title, source, time and context", [
    "search",
    "docker",
    "--limit",
    "3",
  ]);
  run("Chinese text, two characters", ["search", "桂林"]);
  run("The next free title in a lineage", ["title", "--next", "Fix Docker build"]);
  run("Fork the Discord session into a new branch", [
    "fork",
    seeded.ids.discord,
    "--title",
    "Websocket flake, plan B",
  ]);
  run("Usage by source: sessions, messages, tokens, cost", ["stats", "--by", "source"]);
  run("Export everything as JSONL (the interchange format `import` reads)", ["export", "--out", exportFile]);
  run("Import is idempotent: importing the same file again adds nothing", ["import", exportFile]);
  run("What would a 7-day retention delete?", ["prune", "--older-than", "7", "--dry-run"]);
  run("Health check: schema, integrity, search indexes, WAL, permissions", ["doctor"]);
  process.stdout.write(
    `\n${failures === 0 ? "Tour complete." : `Tour complete; ${countOf(failures, "step")} failed (see above).`} ` +
      "Try it on your own history: hermes-sessions --help\n",
  );
} finally {
  rmSync(home, { recursive: true, force: true });
}
