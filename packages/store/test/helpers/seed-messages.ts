import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";

/**
 * A v11 file at `path` with one session `s` whose messages are `contents`, written as the
 * reference writes them (raw INSERTs; its triggers index them), timestamps from `firstTs` up.
 */
export async function seedMessages(
  path: string,
  contents: readonly string[],
  firstTs = 1_800_000_000,
): Promise<void> {
  const store = await openSessionStore({ path, readers: 0 });
  await store.createSession({ id: "s", source: "cli" });
  await store.close();
  const raw = new Database(path);
  const add = raw.prepare(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', ?, ?)",
  );
  raw.transaction(() => {
    for (const [i, content] of contents.entries()) add.run(content, firstTs + i + 1);
  })();
  raw.pragma("wal_checkpoint(TRUNCATE)");
  raw.close();
}
