import { CORE_INDEXES, CORE_TABLES, type CoreTableName } from "../core-ddl.js";
import { addColumnSql, DECLARED_COLUMNS } from "../declared-columns.js";
import { objectExists, tableColumns } from "./introspect.js";
import type { EnsureStep } from "./migration.js";

const TABLE_NAMES = Object.keys(CORE_TABLES) as CoreTableName[];

/**
 * The v11 core tables and their indexes, created when missing (the reference runs this script
 * on every open; `IF NOT EXISTS` leaves existing objects untouched).
 */
export const coreTablesStep: EnsureStep = {
  name: "core-tables",
  isSatisfied(db) {
    return (
      TABLE_NAMES.every((t) => objectExists(db, "table", t)) &&
      Object.keys(CORE_INDEXES).every((i) => objectExists(db, "index", i))
    );
  },
  up({ db }) {
    for (const t of TABLE_NAMES) db.exec(CORE_TABLES[t]);
    for (const sql of Object.values(CORE_INDEXES)) db.exec(sql);
  },
};

/**
 * Declarative column reconciliation: every column declared in the v11 DDL that an old table
 * lacks is added with its type, `NOT NULL` and default, whatever version the file records.
 * This is how the reference upgrades v1–v9 files, and why historic per-version column steps
 * (v2 `finish_reason` … v9 `codex_message_items`) need no code of their own.
 */
export const reconcileColumnsStep: EnsureStep = {
  name: "reconcile-columns",
  isSatisfied(db) {
    return TABLE_NAMES.every((t) => {
      const have = tableColumns(db, t);
      return DECLARED_COLUMNS[t].every((c) => have.has(c.name));
    });
  },
  up({ db, warn }) {
    for (const t of TABLE_NAMES) {
      const have = tableColumns(db, t);
      for (const column of DECLARED_COLUMNS[t]) {
        if (have.has(column.name)) continue;
        try {
          db.exec(addColumnSql(t, column));
        } catch (error) {
          // The reference swallows these (e.g. NOT NULL without a default on a very old
          // table); we do the same so the open succeeds, but say so.
          warn(`Could not add column ${t}.${column.name}: ${(error as Error).message}`);
        }
      }
    }
  },
};
