import type { SqlExecutor } from "../sql-executor.js";

/** Whether a table, index, trigger or view of that name exists in the main schema. */
export function objectExists(db: SqlExecutor, type: string, name: string): boolean {
  return (
    db.get("SELECT 1 AS found FROM sqlite_master WHERE type = ? AND name = ?", [type, name]) !== undefined
  );
}

/** Column names of a table in the main schema (empty when the table does not exist). */
export function tableColumns(db: SqlExecutor, table: string): Set<string> {
  const rows = db.all<{ name: string }>("SELECT name FROM pragma_table_info(?)", [table]);
  return new Set(rows.map((r) => r.name));
}

/**
 * The recorded schema version: `null` when there is no `schema_version` table or no row in it
 * (the reference treats both as a fresh file).
 */
export function readSchemaVersion(db: SqlExecutor): number | null {
  if (!objectExists(db, "table", "schema_version")) return null;
  const row = db.get<{ version: number }>("SELECT version FROM schema_version LIMIT 1");
  return row === undefined ? null : Number(row.version);
}
