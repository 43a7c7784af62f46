// A writer that appends every `intervalMs` until a line arrives on stdin, recording when each
// write started (epoch ms) and how long it took, for the backup tests and bench: through the
// store (`store`), or with the reference implementation's own SQL and write discipline
// (`reference`: plain better-sqlite3, 1 s busy timeout, BEGIN IMMEDIATE, 15 attempts with
// 20–150 ms sleeps, PASSIVE checkpoint every 50 writes). Prints "ready", then one JSON line.
// argv: <db path> <store|reference> <tag> <intervalMs>

import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";

const [path, kind, tag, intervalText] = process.argv.slice(2);
const intervalMs = Number(intervalText);
const session = `steady-${tag}`;
const pause = new Int32Array(new SharedArrayBuffer(4));

function referenceWriter() {
  const db = new Database(path, { timeout: 1000 });
  db.pragma("foreign_keys = ON");
  let writes = 0;
  const run = (fn) => {
    for (let attempt = 0; ; attempt++) {
      try {
        db.transaction(fn).immediate();
        if (++writes % 50 === 0) db.pragma("wal_checkpoint(PASSIVE)");
        return;
      } catch (error) {
        const m = String(error.message).toLowerCase();
        if (attempt < 14 && (m.includes("locked") || m.includes("busy"))) {
          Atomics.wait(pause, 0, 0, 20 + Math.random() * 130);
          continue;
        }
        throw error;
      }
    }
  };
  const create = db.prepare(
    "INSERT OR IGNORE INTO sessions (id, source, model, started_at) VALUES (?, ?, ?, ?)",
  );
  const insert = db.prepare(
    "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES (?, ?, ?, ?, ?)",
  );
  const bump = db.prepare(
    "UPDATE sessions SET message_count = message_count + 1, tool_call_count = tool_call_count + ? WHERE id = ?",
  );
  run(() => create.run(session, "reference", "ref-model", Date.now() / 1000));
  return {
    append: async (i) => {
      const calls = i % 5 === 0 ? JSON.stringify([{ id: `call${i}`, function: { name: "terminal" } }]) : null;
      run(() => {
        insert.run(session, "assistant", `${tag} steady ${i}`, calls, Date.now() / 1000);
        bump.run(calls ? 1 : 0, session);
      });
    },
    close: async () => db.close(),
  };
}

async function storeWriter() {
  const store = await openSessionStore({ path });
  await store.ensureSession({ id: session, source: "steady" });
  return {
    append: async (i) => {
      await store.appendMessage({ sessionId: session, role: "user", content: `${tag} steady ${i}` });
    },
    close: () => store.close(),
  };
}

const writer = kind === "store" ? await storeWriter() : referenceWriter();
let stop = false;
process.stdin.once("data", () => {
  stop = true;
});
process.stdout.write("ready\n");
const writes = [];
const errors = [];
for (let i = 0; !stop; i++) {
  const startedAt = Date.now();
  const t0 = performance.now();
  try {
    await writer.append(i);
  } catch (error) {
    errors.push(String(error.message));
  }
  writes.push([startedAt, performance.now() - t0]);
  await new Promise((resolve) => setTimeout(resolve, intervalMs));
}
await writer.close();
process.stdin.destroy();
process.stdout.write(
  `${JSON.stringify({ tag, kind, appended: writes.length - errors.length, errors, writes })}\n`,
);
