// Readers that always keep a snapshot open: two connections take turns, each holding a read
// transaction for `holdMs`, staggered so that one of them is always reading. This is what
// starves PASSIVE checkpoints (the WAL can never be reset while a reader uses it).
// Runs until stdin closes; prints "reading" once both have a snapshot, then the count of
// snapshots taken on exit.
// argv: <db path> <holdMs>
import Database from "better-sqlite3";

const [path, holdText] = process.argv.slice(2);
const holdMs = Number(holdText);
const readers = [0, 1].map(() => new Database(path, { readonly: true, timeout: 1000 }));
let snapshots = 0;
let running = true;

function cycle(db) {
  if (!running) return;
  if (db.inTransaction) db.exec("COMMIT");
  db.exec("BEGIN");
  db.prepare("SELECT COUNT(*) FROM messages").get();
  snapshots++;
  setTimeout(() => cycle(db), holdMs);
}

cycle(readers[0]);
setTimeout(() => {
  cycle(readers[1]);
  process.stdout.write("reading\n");
}, holdMs / 2);
process.stdin.resume();
process.stdin.on("end", () => {
  running = false;
  for (const db of readers) {
    if (db.inTransaction) db.exec("COMMIT");
    db.close();
  }
  process.stdout.write(`${JSON.stringify({ snapshots })}\n`);
  process.exit(0);
});
