import { CORE_TABLES, type CoreTableName } from "./core-ddl.js";

/** One column as declared in the v11 DDL: what reconciliation needs to add it to an old table. */
export interface DeclaredColumn {
  readonly name: string;
  readonly type: string;
  readonly notNull: boolean;
  readonly primaryKey: boolean;
  /** The `DEFAULT` expression as written in the DDL, or `null`. */
  readonly defaultSql: string | null;
}

// The DDL in core-ddl.ts puts one column per line; a test checks this reading against
// SQLite's own `PRAGMA table_info` of the same statements, so the two cannot drift.
const COLUMN_LINE = /^\s+(\w+)\s+(TEXT|INTEGER|REAL|BLOB)\b(.*?),?$/;

function parseColumns(ddl: string): DeclaredColumn[] {
  const columns: DeclaredColumn[] = [];
  for (const line of ddl.split("\n")) {
    const m = COLUMN_LINE.exec(line);
    if (!m) continue;
    const [, name, type, rest = ""] = m as unknown as [string, string, string, string];
    const dflt = /\bDEFAULT\s+(\S+)/.exec(rest);
    columns.push({
      name,
      type,
      notNull: /\bNOT NULL\b/.test(rest),
      primaryKey: /\bPRIMARY KEY\b/.test(rest),
      defaultSql: dflt?.[1] ?? null,
    });
  }
  return columns;
}

/** Declared columns of every core table, in declaration order. */
export const DECLARED_COLUMNS: Readonly<Record<CoreTableName, readonly DeclaredColumn[]>> = {
  schema_version: parseColumns(CORE_TABLES.schema_version),
  sessions: parseColumns(CORE_TABLES.sessions),
  messages: parseColumns(CORE_TABLES.messages),
  state_meta: parseColumns(CORE_TABLES.state_meta),
};

/**
 * The `ALTER TABLE … ADD COLUMN` statement the reference issues for a missing column:
 * type, then `NOT NULL` (unless primary key), then the default.
 */
export function addColumnSql(table: string, column: DeclaredColumn): string {
  let sql = `ALTER TABLE "${table}" ADD COLUMN "${column.name}" ${column.type}`;
  if (column.notNull && !column.primaryKey) sql += " NOT NULL";
  if (column.defaultSql !== null) sql += ` DEFAULT ${column.defaultSql}`;
  return sql;
}
