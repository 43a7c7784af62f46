// Holds the write lock of a database like another process would (VACUUM, a slow writer):
// plain better-sqlite3, BEGIN IMMEDIATE, a few rows written with the reference's SQL, then it
// waits `holdMs` and commits (or, with "hang", waits until killed). Prints "locked" once inside.
// argv: <db path> <holdMs> [commit|rollback|hang] [rows]
import Database from "better-sqlite3";

const [path, holdText, mode = "commit", rowsText = "3"] = process.argv.slice(2);
const db = new Database(path, { timeout: 10_000 });
db.pragma("foreign_keys = ON");
db.prepare(
  "INSERT OR IGNORE INTO sessions (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
).run("holder", "lock-holder", null, null, null, null, null, Date.now() / 1000);
db.exec("BEGIN IMMEDIATE");
const insert = db.prepare(
  "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
);
const bump = db.prepare("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?");
for (let i = 0; i < Number(rowsText); i++) {
  insert.run(
    "holder",
    "user",
    `held row ${i} partialtxn`,
    null,
    null,
    null,
    Date.now() / 1000,
    null,
    null,
    null,
    null,
    null,
    null,
    null,
  );
  bump.run("holder");
}
process.stdout.write("locked\n");
const pause = new Int32Array(new SharedArrayBuffer(4));
if (mode === "hang") for (;;) Atomics.wait(pause, 0, 0, 1000);
// A synchronous sleep: the process is busy inside its transaction, as a VACUUM would be.
Atomics.wait(pause, 0, 0, Number(holdText));
db.exec(mode === "rollback" ? "ROLLBACK" : "COMMIT");
db.close();
process.stdout.write("released\n");
