// Opens a store (upgrading the file if it is old) and prints what the open did, as JSON.
// Used by the migration crash and contention tests.
// argv: <db path> <start at, epoch ms: wait until then before opening> [flags]
//   --progress             print one `progress <step> <done> <total>` line per report first
//   --write-deadline=<ms>  writeDeadlineMs of the store (an upgrade must not depend on it)
import { openSessionStore } from "@hermes/store";

const [path, startAt, ...flags] = process.argv.slice(2);
const deadline = flags.find((f) => f.startsWith("--write-deadline="));
const wait = Number(startAt) - Date.now();
if (wait > 0) await new Promise((r) => setTimeout(r, wait));
const onMigrationProgress = flags.includes("--progress")
  ? (p) => process.stdout.write(`progress ${p.step} ${p.done} ${p.total}\n`)
  : undefined;
const store = await openSessionStore({
  path,
  onMigrationProgress,
  ...(deadline ? { writeDeadlineMs: Number(deadline.split("=")[1]) } : {}),
});
process.stdout.write(`${JSON.stringify({ pid: process.pid, migration: store.migration })}\n`);
await store.close();
