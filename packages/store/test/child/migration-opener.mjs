// Opens a store (upgrading the file if it is old) and prints what the open did, as JSON.
// Used by the migration crash and contention tests.
// argv: <db path> <start at, epoch ms: wait until then before opening> [--progress]
// With --progress, prints one `progress <step> <done> <total>` line per report first.
import { openSessionStore } from "@hermes/store";

const [path, startAt, flag] = process.argv.slice(2);
const wait = Number(startAt) - Date.now();
if (wait > 0) await new Promise((r) => setTimeout(r, wait));
const onMigrationProgress =
  flag === "--progress"
    ? (p) => process.stdout.write(`progress ${p.step} ${p.done} ${p.total}\n`)
    : undefined;
const store = await openSessionStore({ path, onMigrationProgress });
process.stdout.write(`${JSON.stringify({ pid: process.pid, migration: store.migration })}\n`);
await store.close();
