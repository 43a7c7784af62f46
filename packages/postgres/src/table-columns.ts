import {
  MESSAGE_COLUMNS as MESSAGE_COLUMN_SPECS,
  MESSAGE_VIEW_COLUMNS,
  SESSION_COLUMNS as SESSION_COLUMN_SPECS,
  SESSION_VIEW_COLUMNS,
} from "@hermes/core";
import type { PgMessagesTable, PgSessionsTable } from "./pg-database.js";

/** The v11 columns of `sessions`, in the table's order. */
export const V11_SESSION_COLUMNS = SESSION_COLUMN_SPECS.map((c) => c.name as keyof PgSessionsTable);
/** The read model's session columns (v10). */
export const SESSION_VIEW_NAMES = SESSION_VIEW_COLUMNS.map((c) => c.name as keyof PgSessionsTable);
/** The columns of `sessions` a reader gets (what `getSession` returns): v11's, then the read model's. */
export const SESSION_COLUMNS = [...V11_SESSION_COLUMNS, ...SESSION_VIEW_NAMES];
/** The same columns of the session aliased `s`. */
export const S_COLUMNS = SESSION_COLUMNS.map((c) => `s.${c}` as const);
/** The v11 columns of `messages`. */
export const V11_MESSAGE_COLUMNS = MESSAGE_COLUMN_SPECS.map((c) => c.name as keyof PgMessagesTable);
/** The read model's message columns (v10). */
export const MESSAGE_VIEW_NAMES = MESSAGE_VIEW_COLUMNS.map((c) => c.name as keyof PgMessagesTable);
/** The columns of `messages` a reader gets (not the search columns): v11's, then the read model's. */
export const MESSAGE_COLUMNS = [...V11_MESSAGE_COLUMNS, ...MESSAGE_VIEW_NAMES];

/**
 * A row fresh from a query, in the read model's shape: a read-model field holding NULL is
 * removed. This schema holds every version's fields at once, so it cannot tell "the source had
 * no such column" (a v11 file's sessions: the key is absent there) from a NULL: both read as
 * absent, and a v11 store's rows and this one's compare equal. Converted in place; returns it.
 */
export function dropNullViewFields<T extends object>(row: T, names: readonly string[]): T {
  const r = row as Record<string, unknown>;
  for (const name of names) if (r[name] === null) delete r[name];
  return row;
}

/** {@link dropNullViewFields} for a session row. */
export const sessionReadRow = <T extends object>(row: T): T => dropNullViewFields(row, SESSION_VIEW_NAMES);
/** {@link dropNullViewFields} for a message row (before `toMessageRow`). */
export const messageReadRow = <T extends object>(row: T): T => dropNullViewFields(row, MESSAGE_VIEW_NAMES);
