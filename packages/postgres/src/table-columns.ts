import {
  MESSAGE_COLUMNS as MESSAGE_COLUMN_SPECS,
  SESSION_COLUMNS as SESSION_COLUMN_SPECS,
} from "@hermes/core";
import type { MessagesTable, SessionsTable } from "@hermes/schema";

/** The columns of `sessions`, in the table's order (what `getSession` returns). */
export const SESSION_COLUMNS = SESSION_COLUMN_SPECS.map((c) => c.name as keyof SessionsTable);
/** The same columns of the session aliased `s`. */
export const S_COLUMNS = SESSION_COLUMNS.map((c) => `s.${c}` as const);
/** The columns of `messages` a reader gets (not the search columns). */
export const MESSAGE_COLUMNS = MESSAGE_COLUMN_SPECS.map((c) => c.name as keyof MessagesTable);
