// A writer that uses only the reference implementation's SQL and write discipline: plain
// better-sqlite3, a 1 s busy timeout, BEGIN IMMEDIATE, up to 15 attempts with a random
// 20–150 ms sleep on "locked"/"busy" errors, PASSIVE checkpoint every 50 writes.
// argv: <db path> <tag> <count>
import Database from "better-sqlite3";

const [path, tag, countText] = process.argv.slice(2);
const db = new Database(path, { timeout: 1000 });
db.pragma("journal_mode = WAL");
db.pragma("foreign_keys = ON");
const pause = new Int32Array(new SharedArrayBuffer(4));
let writeCount = 0;

function executeWrite(fn) {
  let last;
  for (let attempt = 0; attempt < 15; attempt++) {
    try {
      db.exec("BEGIN IMMEDIATE");
      let result;
      try {
        result = fn();
        db.exec("COMMIT");
      } catch (error) {
        try {
          db.exec("ROLLBACK");
        } catch {}
        throw error;
      }
      writeCount++;
      if (writeCount % 50 === 0) {
        try {
          db.pragma("wal_checkpoint(PASSIVE)");
        } catch {}
      }
      return result;
    } catch (error) {
      const message = String(error.message).toLowerCase();
      if (message.includes("locked") || message.includes("busy")) {
        last = error;
        if (attempt < 14) {
          Atomics.wait(pause, 0, 0, 20 + Math.random() * 130);
          continue;
        }
      }
      throw error;
    }
  }
  throw last;
}

const session = `reference-${tag}`;
const createSession = db.prepare(
  "INSERT OR IGNORE INTO sessions (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
);
const insert = db.prepare(
  `INSERT INTO messages (session_id, role, content, tool_call_id,
   tool_calls, tool_name, timestamp, token_count, finish_reason,
   reasoning, reasoning_content, reasoning_details, codex_reasoning_items,
   codex_message_items)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
);
const bump = db.prepare("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?");
const bumpTools = db.prepare(
  "UPDATE sessions SET message_count = message_count + 1, tool_call_count = tool_call_count + ? WHERE id = ?",
);
executeWrite(() =>
  createSession.run(session, "reference", null, "ref-model", null, null, null, Date.now() / 1000),
);
process.stdout.write("ready\n");
const errors = [];
for (let i = 0; i < Number(countText); i++) {
  const toolCalls = i % 5 === 0 ? JSON.stringify([{ id: `call${i}`, function: { name: "terminal" } }]) : null;
  try {
    executeWrite(() => {
      insert.run(
        session,
        "assistant",
        `${tag} refmsg ${i} pythonside`,
        null,
        toolCalls,
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
      if (toolCalls) bumpTools.run(1, session);
      else bump.run(session);
    });
  } catch (error) {
    errors.push(String(error.message));
  }
}
db.close();
process.stdout.write(`${JSON.stringify({ tag, errors })}\n`);
