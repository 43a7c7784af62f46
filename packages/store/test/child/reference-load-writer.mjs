// A writer that uses only the reference implementation's SQL and write discipline, for a
// sustained run: plain better-sqlite3, a 1 s busy timeout, BEGIN IMMEDIATE, up to 15 attempts
// with a random 20–150 ms sleep on "locked"/"busy" errors, PASSIVE checkpoint every 50 writes.
// It writes messages (English, short CJK terms, three-character CJK, some with tool calls) to a
// few sessions of its own, bumps their counters and token counts, until `durationMs` has passed
// and the file `stopPath` exists (the test creates it once its own side has done enough).
// argv: <db path> <tag> <durationMs> <stopPath>
// Prints "ready" once its sessions exist, then one JSON line: { tag, written: [[id, i]], errors }.
import { existsSync } from "node:fs";
import Database from "better-sqlite3";

const [path, tag, durationText, stopPath] = process.argv.slice(2);
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

/** The content of this writer's message number `i` (the test recomputes it). */
function contentOf(tag, i) {
  if (i % 3 === 0) return `${tag} 部署 ${i} 日志`;
  if (i % 3 === 1) return `${tag} refload ${i} walrus`;
  return `${tag} 東京都 ${i}`;
}

const SESSIONS = 4;
const sessionOf = (i) => `ref-${tag}-${i % SESSIONS}`;
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
const tokens = db.prepare(
  `UPDATE sessions SET
     input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
     cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,
     reasoning_tokens = reasoning_tokens + ?,
     estimated_cost_usd = COALESCE(estimated_cost_usd, 0) + COALESCE(?, 0),
     actual_cost_usd = CASE WHEN ? IS NULL THEN actual_cost_usd ELSE COALESCE(actual_cost_usd, 0) + ? END,
     cost_status = COALESCE(?, cost_status), cost_source = COALESCE(?, cost_source),
     pricing_version = COALESCE(?, pricing_version),
     billing_provider = COALESCE(billing_provider, ?), billing_base_url = COALESCE(billing_base_url, ?),
     billing_mode = COALESCE(billing_mode, ?), model = COALESCE(model, ?),
     api_call_count = COALESCE(api_call_count, 0) + ?
   WHERE id = ?`,
);

for (let k = 0; k < SESSIONS; k++) {
  executeWrite(() =>
    createSession.run(sessionOf(k), "reference", null, null, null, null, null, Date.now() / 1000),
  );
}
process.stdout.write("ready\n");

const deadline = performance.now() + Number(durationText);
const written = [];
const errors = [];
for (let i = 0; performance.now() < deadline || !existsSync(stopPath); i++) {
  const session = sessionOf(i);
  const toolCalls = i % 5 === 0 ? JSON.stringify([{ id: `call${i}`, function: { name: "terminal" } }]) : null;
  try {
    const id = executeWrite(() => {
      const r = insert.run(
        session,
        i % 2 === 0 ? "user" : "assistant",
        contentOf(tag, i),
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
      return Number(r.lastInsertRowid);
    });
    written.push([id, i]);
    if (i % 10 === 9) {
      executeWrite(() =>
        tokens.run(10, 5, 0, 0, 0, null, null, null, null, null, null, null, null, null, null, 1, session),
      );
    }
  } catch (error) {
    errors.push(String(error.message));
  }
  // An agent does some work between messages.
  Atomics.wait(pause, 0, 0, 1 + Math.random() * 3);
}
db.close();
process.stdout.write(`${JSON.stringify({ tag, written, errors })}\n`);
