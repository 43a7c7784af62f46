import { CORE_TABLES, type CoreTableName } from "@hermes/schema";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { tableInfo } from "./sqlite-executor.js";
import { DATABASE_SHAPES } from "./table-shapes.js";

const TABLES = Object.keys(CORE_TABLES) as CoreTableName[];

/**
 * The rule the table interfaces follow, read from the DDL: a column is nullable unless it is
 * `NOT NULL` or the primary key (the reference always writes its keys, although SQLite would
 * accept a NULL TEXT key); it may be left out of an insert (`Generated`) when it has a
 * `DEFAULT` or is the INTEGER PRIMARY KEY (the rowid).
 */
function shapesFromDdl(table: CoreTableName) {
  const db = new Database(":memory:");
  db.exec(CORE_TABLES[table]);
  const columns = tableInfo(db, table);
  db.close();
  return Object.fromEntries(
    columns.map((c) => [
      c.name,
      {
        nullable: c.notnull === 0 && c.pk === 0,
        generated: c.dflt_value !== null || (c.pk > 0 && c.type === "INTEGER"),
      },
    ]),
  );
}

describe("HermesDatabase (Kysely table interfaces) against the DDL", () => {
  it("has exactly the four core tables", () => {
    expect(Object.keys(DATABASE_SHAPES).sort()).toEqual([...TABLES].sort());
  });

  // DATABASE_SHAPES is type-checked against the interfaces (table-types.test-d.ts); here it is
  // compared with SQLite's reading of the DDL, so interface and DDL cannot drift apart.
  it.each(TABLES)("%s: every column, its nullability and Generated match the DDL", (table) => {
    expect(DATABASE_SHAPES[table]).toEqual(shapesFromDdl(table));
  });
});
