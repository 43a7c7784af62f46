import { setTimeout as sleep } from "node:timers/promises";
import type Database from "better-sqlite3";

/**
 * The baseline of the change scenarios: a raw reader polling the rowid range of `messages` past
 * its cursor every `intervalMs` (it sees appends, nothing else). `waitFor(id)` returns once a row
 * with that id or a later one was read.
 */
export function rawIdPoller(raw: Database.Database, intervalMs: number) {
  const newer = raw.prepare(
    "SELECT id, session_id, content FROM messages WHERE id > ? ORDER BY id LIMIT 500",
  );
  let cursor = Number(raw.prepare("SELECT COALESCE(MAX(id), 0) FROM messages").pluck().get());
  return {
    get cursor() {
      return cursor;
    },
    async waitFor(id: number): Promise<void> {
      for (;;) {
        const rows = newer.all(cursor) as Array<{ id: number }>;
        if (rows.length > 0) cursor = rows[rows.length - 1]!.id;
        if (cursor >= id) return;
        await sleep(intervalMs);
      }
    },
  };
}
