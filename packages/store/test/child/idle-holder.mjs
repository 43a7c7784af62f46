// Holds a database open the way an idle agent does: one connection, one read, then nothing
// until killed (no transaction, so in rollback-journal mode it holds no lock at all).
// argv: <db path>
import Database from "better-sqlite3";

const [path] = process.argv.slice(2);
const db = new Database(path, { timeout: 1000 });
db.prepare("SELECT count(*) FROM sessions").get();
process.stdout.write("open\n");
const pause = new Int32Array(new SharedArrayBuffer(4));
for (;;) Atomics.wait(pause, 0, 0, 1000);
