import { FTS_TABLE, ftsTableScript, TRIGRAM_TABLE } from "@hermes/search";
import type { DatabaseConnection } from "../database-connection.js";
import type { IndexRepair } from "./index-repair.js";

/**
 * The repair a write runs when it meets a damaged reference search index (`SQLITE_CORRUPT_VTAB`
 * from the FTS5 triggers on `messages`): both FTS5 tables are rebuilt from `messages` (FTS5
 * `rebuild`, with their tables and triggers re-created when missing) and the write is retried
 * once. The index is derived data, so nothing stored is lost; without this every message write
 * would fail until someone ran `rebuildSearchIndex()`. The search index's own maintenance
 * (`search:*` units: verify, rebuild, short-CJK catch-up) is excluded, so that
 * `verifySearchIndex()` still reports damage instead of silently repairing it.
 */
export function referenceSearchIndexRepair(conn: DatabaseConnection): IndexRepair {
  return {
    appliesTo: (label) => !label.startsWith("search:"),
    run: () => {
      for (const table of [FTS_TABLE, TRIGRAM_TABLE] as const) {
        for (const sql of ftsTableScript(table)) conn.exec(sql);
        conn.exec(`INSERT INTO ${table}(${table}) VALUES ('rebuild')`);
      }
    },
  };
}
