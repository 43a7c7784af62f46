// One agent operation on a state.db, in its own process, as another writer would do it: the
// reference's append SQL, the store's API (v11 files), or SQL that reproduces upstream's v30/v31
// write paths as fixtures/UPSTREAM.md describes them (compaction, rewind, flags, delete, prune).
// argv: <db path> <op> <JSON arguments>
import Database from "better-sqlite3";

const [path, op, argText] = process.argv.slice(2);
const a = JSON.parse(argText ?? "{}");

async function storeOp() {
  const { openSessionStore } = await import("@hermes/store");
  const store = await openSessionStore({ path });
  try {
    if (op === "store-append")
      await store.appendMessage({ sessionId: a.session, role: "user", content: a.content });
    else if (op === "store-title") await store.setSessionTitle(a.session, a.title);
    else if (op === "store-end") await store.endSession(a.session, a.reason);
    else if (op === "store-delete") await store.deleteSession(a.session);
    else if (op === "store-prune") await store.pruneSessions({ olderThanDays: 0 });
    else throw new Error(`unknown op ${op}`);
  } finally {
    await store.close();
  }
}

const now = () => Date.now() / 1000;

function sqlOp(db) {
  const cols = new Set(
    db
      .prepare("SELECT name FROM pragma_table_info('messages')")
      .all()
      .map((r) => r.name),
  );
  const activeCount = (s) =>
    db.prepare("SELECT COUNT(*) AS n FROM messages WHERE session_id = ? AND active = 1").get(s).n;
  const activeTools = (s) =>
    db
      .prepare(
        "SELECT COALESCE(SUM(CASE WHEN json_valid(tool_calls) AND json_type(tool_calls) = 'array' THEN json_array_length(tool_calls) WHEN tool_calls IS NOT NULL THEN 1 ELSE 0 END), 0) AS n FROM messages WHERE session_id = ? AND active = 1",
      )
      .get(s).n;
  const deleteSession = (s) => {
    db.prepare("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?").run(s);
    db.prepare("DELETE FROM messages WHERE session_id = ?").run(s);
    db.prepare("DELETE FROM sessions WHERE id = ?").run(s);
  };
  switch (op) {
    case "create":
      db.prepare("INSERT INTO sessions (id, source, started_at) VALUES (?, ?, ?)").run(
        a.session,
        a.source,
        now(),
      );
      return;
    case "ref-append": {
      // The reference's INSERT (v11 columns); newer files' defaults and triggers do the rest.
      db.prepare(
        `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp,
         token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items,
         codex_message_items) VALUES (?, ?, ?, NULL, ?, NULL, ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
      ).run(a.session, a.role ?? "user", a.content, a.toolCalls ? JSON.stringify(a.toolCalls) : null, now());
      db.prepare(
        "UPDATE sessions SET message_count = message_count + 1, tool_call_count = tool_call_count + ? WHERE id = ?",
      ).run(a.toolCalls ? a.toolCalls.length : 0, a.session);
      return;
    }
    case "title":
      db.prepare("UPDATE sessions SET title = ? WHERE id = ?").run(a.title, a.session);
      return;
    case "end":
      // First end_reason wins.
      db.prepare("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL").run(
        now(),
        a.reason,
        a.session,
      );
      return;
    case "flag": {
      const set =
        a.flag === "pinned" && a.value === 1 ? "pinned = 1, hidden = 0" : `${a.flag} = ${a.value ? 1 : 0}`;
      const extra = a.flag === "auto_archived" ? ", archived = 1" : "";
      db.prepare(`UPDATE sessions SET ${set}${extra} WHERE id = ?`).run(a.session);
      return;
    }
    case "compact": {
      // In-place compaction: all active rows but the last two are summarized (active=0,
      // compacted=1); the carried tail's originals are superseded (active=0, compacted=0) and
      // copied (active=1) after a new summary row (a `user` row, _compressed_summary=1).
      const active = db
        .prepare("SELECT id FROM messages WHERE session_id = ? AND active = 1 ORDER BY id")
        .all(a.session);
      if (active.length < 3) throw new Error(`${a.session} has too few active rows to compact`);
      const tail = active.slice(-2).map((r) => r.id);
      const summarized = active.slice(0, -2).map((r) => r.id);
      const mark = db.prepare("UPDATE messages SET active = 0, compacted = ? WHERE id = ?");
      for (const id of summarized) mark.run(1, id);
      for (const id of tail) mark.run(0, id);
      db.prepare(
        "INSERT INTO messages (session_id, role, content, timestamp, _compressed_summary, active) VALUES (?, 'user', ?, ?, 1, 1)",
      ).run(a.session, `summary of ${summarized.length} messages`, now());
      const copy = [...cols].filter((c) => !["id", "active", "compacted", "display_order"].includes(c));
      const list = copy.map((c) => `"${c}"`).join(", ");
      const insertCopy = db.prepare(
        `INSERT INTO messages (${list}, active, compacted) SELECT ${list}, 1, 0 FROM messages WHERE id = ?`,
      );
      for (const id of tail) insertCopy.run(id);
      db.prepare("UPDATE sessions SET message_count = ?, tool_call_count = ? WHERE id = ?").run(
        activeCount(a.session),
        activeTools(a.session),
        a.session,
      );
      return;
    }
    case "rewind": {
      // Rewind to the last active user row: it and every later active row are superseded.
      const target = db
        .prepare("SELECT MAX(id) AS id FROM messages WHERE session_id = ? AND active = 1 AND role = 'user'")
        .get(a.session).id;
      if (target === null) throw new Error(`${a.session} has no user row to rewind to`);
      db.prepare(
        "UPDATE messages SET active = 0, compacted = 0 WHERE session_id = ? AND id >= ? AND active = 1",
      ).run(a.session, target);
      db.prepare(
        "UPDATE sessions SET rewind_count = rewind_count + 1, message_count = ?, tool_call_count = ? WHERE id = ?",
      ).run(activeCount(a.session), activeTools(a.session), a.session);
      return;
    }
    case "delete":
      deleteSession(a.session);
      return;
    case "prune": {
      // Ended, unpinned sessions that are not a compression parent and have no children.
      const rows = db
        .prepare(
          `SELECT id FROM sessions s WHERE ended_at IS NOT NULL AND pinned = 0
           AND COALESCE(end_reason, '') <> 'compression'
           AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.parent_session_id = s.id)`,
        )
        .all();
      for (const r of rows) deleteSession(r.id);
      process.stdout.write(`${JSON.stringify(rows.map((r) => r.id))}\n`);
      return;
    }
    default:
      throw new Error(`unknown op ${op}`);
  }
}

if (op.startsWith("store-")) {
  await storeOp();
} else {
  const db = new Database(path, { timeout: 2000 });
  db.pragma("foreign_keys = ON");
  db.exec("BEGIN IMMEDIATE");
  try {
    sqlOp(db);
    db.exec("COMMIT");
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  } finally {
    db.close();
  }
}
