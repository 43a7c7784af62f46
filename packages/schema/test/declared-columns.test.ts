import { addColumnSql, CORE_TABLES, type CoreTableName, DECLARED_COLUMNS } from "@hermes/schema";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { tableInfo } from "./sqlite-executor.js";

const TABLES = Object.keys(CORE_TABLES) as CoreTableName[];

function declaredDatabase(): Database.Database {
  const db = new Database(":memory:");
  for (const t of TABLES) db.exec(CORE_TABLES[t]);
  return db;
}

describe("declared columns (the reading of the v11 DDL that reconciliation uses)", () => {
  it.each(TABLES)("%s: equals SQLite's own PRAGMA table_info of the same DDL", (table) => {
    const db = declaredDatabase();
    const fromSqlite = tableInfo(db, table).map((c) => ({
      name: c.name,
      type: c.type,
      notNull: c.notnull === 1,
      primaryKey: c.pk > 0,
      defaultSql: c.dflt_value,
    }));
    db.close();
    expect(fromSqlite.length).toBeGreaterThan(0);
    expect(DECLARED_COLUMNS[table]).toEqual(fromSqlite);
  });

  it("covers every column of the four core tables (27 + 15 + 2 + 1)", () => {
    expect(TABLES.map((t) => DECLARED_COLUMNS[t].length)).toEqual([1, 27, 15, 2]);
  });

  it.each(TABLES)("%s: ADD COLUMN statements rebuild the declared table from its first column", (table) => {
    const db = new Database(":memory:");
    const [first, ...rest] = DECLARED_COLUMNS[table];
    if (first === undefined) throw new Error("no columns");
    const constraints = `${first.primaryKey ? " PRIMARY KEY" : ""}${first.notNull ? " NOT NULL" : ""}`;
    db.exec(`CREATE TABLE ${table} (${first.name} ${first.type}${constraints})`);
    // Old tables hold rows; SQLite only refuses a NOT NULL column without default when it does.
    db.exec(`INSERT INTO ${table} (${first.name}) VALUES (1)`);
    const failed: string[] = [];
    for (const column of rest) {
      try {
        db.exec(addColumnSql(table, column));
      } catch {
        failed.push(column.name);
      }
    }
    const expected = tableInfo(declaredDatabase(), table).filter((c) => !failed.includes(c.name));
    expect(tableInfo(db, table)).toEqual(expected);
    // Only NOT NULL columns without a default cannot be added to a table that holds rows
    // (the reference swallows that error, SPEC.md §3).
    const impossible = rest.filter((c) => c.notNull && c.defaultSql === null).map((c) => c.name);
    expect(failed).toEqual(impossible);
    db.close();
  });

  it("writes the reference's ALTER TABLE text", () => {
    const title = DECLARED_COLUMNS.sessions.find((c) => c.name === "title");
    const apiCalls = DECLARED_COLUMNS.sessions.find((c) => c.name === "api_call_count");
    const source = DECLARED_COLUMNS.sessions.find((c) => c.name === "source");
    expect(title && addColumnSql("sessions", title)).toBe('ALTER TABLE "sessions" ADD COLUMN "title" TEXT');
    expect(apiCalls && addColumnSql("sessions", apiCalls)).toBe(
      'ALTER TABLE "sessions" ADD COLUMN "api_call_count" INTEGER DEFAULT 0',
    );
    expect(source && addColumnSql("sessions", source)).toBe(
      'ALTER TABLE "sessions" ADD COLUMN "source" TEXT NOT NULL',
    );
  });
});
