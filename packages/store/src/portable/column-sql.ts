import { MESSAGE_COLUMNS, SESSION_COLUMNS } from "@hermes/core";

/** Comma-separated, quoted column list of `sessions` in DDL order, for hand-written SQL. */
export const SESSION_COLUMN_SQL = SESSION_COLUMNS.map((c) => `"${c.name}"`).join(", ");
/** Comma-separated, quoted column list of `messages` in DDL order, for hand-written SQL. */
export const MESSAGE_COLUMN_SQL = MESSAGE_COLUMNS.map((c) => `"${c.name}"`).join(", ");
