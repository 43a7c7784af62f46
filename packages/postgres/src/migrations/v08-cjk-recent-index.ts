import type { PgMigration } from "./pg-migration.js";

/**
 * The newest messages holding CJK, read off an index: `(timestamp DESC, id)` over the rows whose
 * gram vector is not empty (the predicate CJK queries state, see `substringCondition`). A page
 * of one CJK term walks it newest first, checking each row's grams, or selects the term's rows
 * through the GIN gram index and sorts them (see `searchMessages`).
 */
export const CJK_RECENT_INDEX_SQL = `CREATE INDEX IF NOT EXISTS idx_messages_cjk_recent
  ON messages (timestamp DESC, id) WHERE search_grams <> ''::tsvector`;

/**
 * v8: `message_grams` (v4: one row per gram and message, ~100 per message with CJK, kept by
 * triggers on every insert, update and delete) is dropped for {@link CJK_RECENT_INDEX_SQL}: one
 * index entry per message with CJK. The grams' statistics (`ANALYZE`) let the planner choose
 * between walking the newest CJK messages and sorting a term's matches.
 */
export const v08CjkRecentIndex: PgMigration = {
  version: 8,
  name: "CJK search: the newest messages with CJK off one partial index instead of the message_grams side table",
  sql: [
    "DROP TRIGGER IF EXISTS hermes_message_grams_insert ON messages",
    "DROP TRIGGER IF EXISTS hermes_message_grams_delete ON messages",
    "DROP TRIGGER IF EXISTS hermes_message_grams_update ON messages",
    "DROP FUNCTION IF EXISTS hermes_message_grams_insert_row()",
    "DROP FUNCTION IF EXISTS hermes_message_grams_insert()",
    "DROP FUNCTION IF EXISTS hermes_message_grams_delete()",
    "DROP FUNCTION IF EXISTS hermes_message_grams_update()",
    "DROP TABLE IF EXISTS message_grams",
    CJK_RECENT_INDEX_SQL,
    "ANALYZE messages (timestamp, search_grams)",
  ],
};
