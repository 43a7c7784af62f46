import type { PgMigration } from "./pg-migration.js";

/**
 * v7: `message_grams` filled by a row trigger that fires for messages holding CJK only (`WHEN`
 * is checked without calling the function), instead of v4's statement trigger, which ran a
 * PL/pgSQL function and copied every inserted row into a transition table on each append
 * (~14% of the server's CPU per append, though ~9% of messages have CJK). Deletes and updates
 * keep v4's statement triggers.
 */
export const v07GramRowTrigger: PgMigration = {
  version: 7,
  name: "appends: message_grams filled by a row trigger that fires for messages with CJK only",
  sql: [
    // The function keeps the schema it was made in whatever the writer's search_path.
    `CREATE OR REPLACE FUNCTION hermes_message_grams_insert_row() RETURNS trigger LANGUAGE plpgsql
     SET search_path FROM CURRENT AS $fn$
     BEGIN
       INSERT INTO message_grams (gram, timestamp, message_id)
         SELECT l, NEW.timestamp, NEW.id FROM unnest(tsvector_to_array(NEW.search_grams)) AS l;
       RETURN NULL;
     END $fn$`,
    "DROP TRIGGER IF EXISTS hermes_message_grams_insert ON messages",
    `CREATE TRIGGER hermes_message_grams_insert AFTER INSERT ON messages FOR EACH ROW
     WHEN (NEW.search_grams <> ''::tsvector) EXECUTE FUNCTION hermes_message_grams_insert_row()`,
    "DROP FUNCTION IF EXISTS hermes_message_grams_insert()",
  ],
};
