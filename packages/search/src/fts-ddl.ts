/**
 * The two FTS5 tables of `state.db` and the triggers that keep them in step with `messages`,
 * exactly as the reference writes them (the SQL text is part of the file contract).
 *
 * Both are external-content tables over `messages` (rowid = `messages.id`) indexing three
 * columns: `content`, `tool_calls` (the raw JSON text) and `tool_name`. The triggers are plain
 * SQL, so any process that writes `messages` — the Python agent included — keeps them current.
 */

/** Names of the FTS5 tables. */
export const FTS_TABLE = "messages_fts";
export const TRIGRAM_TABLE = "messages_fts_trigram";

function ftsDdl(table: string, tokenize: string | null): string {
  const tok = tokenize === null ? "" : `,\n    tokenize='${tokenize}'`;
  return `CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING fts5(
    content,
    tool_calls,
    tool_name,
    content=messages,
    content_rowid=id${tok}
)`;
}

function triggerDdl(table: string): Record<string, string> {
  const del = `INSERT INTO ${table}(${table}, rowid, content, tool_calls, tool_name)
        VALUES('delete', old.id, old.content, old.tool_calls, old.tool_name);`;
  const ins = `INSERT INTO ${table}(rowid, content, tool_calls, tool_name)
        VALUES (new.id, new.content, new.tool_calls, new.tool_name);`;
  return {
    [`${table}_insert`]: `CREATE TRIGGER IF NOT EXISTS ${table}_insert AFTER INSERT ON messages BEGIN
    ${ins}
END`,
    [`${table}_delete`]: `CREATE TRIGGER IF NOT EXISTS ${table}_delete AFTER DELETE ON messages BEGIN
    ${del}
END`,
    [`${table}_update`]: `CREATE TRIGGER IF NOT EXISTS ${table}_update AFTER UPDATE ON messages BEGIN
    ${del}
    ${ins}
END`,
  };
}

/** `CREATE VIRTUAL TABLE` statements, keyed by table name. */
export const FTS_TABLES: Readonly<Record<string, string>> = {
  [FTS_TABLE]: ftsDdl(FTS_TABLE, null),
  [TRIGRAM_TABLE]: ftsDdl(TRIGRAM_TABLE, "trigram"),
};

/** `CREATE TRIGGER` statements of both tables, keyed by trigger name. */
export const FTS_TRIGGERS: Readonly<Record<string, string>> = {
  ...triggerDdl(FTS_TABLE),
  ...triggerDdl(TRIGRAM_TABLE),
};

/** The statements that create one FTS table and its three triggers. */
export function ftsTableScript(table: typeof FTS_TABLE | typeof TRIGRAM_TABLE): string[] {
  return [ftsDdl(table, table === TRIGRAM_TABLE ? "trigram" : null), ...Object.values(triggerDdl(table))];
}
