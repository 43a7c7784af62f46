import type { PgMigration } from "./pg-migration.js";

/**
 * v10: the columns of the read model of newer agents' files (`SessionViewFields` and
 * `MessageViewFields` of `@hermes/core`), so that a v30/v31 file imported or mirrored here keeps
 * its flags, uids and view state. Nullable without defaults: NULL means "the source had no
 * value" (data from a v11 file), never a guess; adding them rewrites no row.
 */
export const v10AgentReadModel: PgMigration = {
  version: 10,
  name: "read model: newer agents' session flags, message uids and view state",
  sql: [
    `ALTER TABLE sessions
      ADD COLUMN IF NOT EXISTS pinned boolean,
      ADD COLUMN IF NOT EXISTS archived boolean,
      ADD COLUMN IF NOT EXISTS auto_archived boolean,
      ADD COLUMN IF NOT EXISTS hidden boolean,
      ADD COLUMN IF NOT EXISTS created_source text,
      ADD COLUMN IF NOT EXISTS last_read_at double precision,
      ADD COLUMN IF NOT EXISTS rewind_count bigint`,
    `ALTER TABLE messages
      ADD COLUMN IF NOT EXISTS message_uid text,
      ADD COLUMN IF NOT EXISTS absorbed_message_uids text,
      ADD COLUMN IF NOT EXISTS tool_call_uids text,
      ADD COLUMN IF NOT EXISTS tool_call_uid text,
      ADD COLUMN IF NOT EXISTS view_state text
        CHECK (view_state IN ('active', 'compacted', 'superseded')),
      ADD COLUMN IF NOT EXISTS compressed_summary boolean`,
    // Whether any session is left out of default listings, answered off an (empty, for v11 data) index.
    `CREATE INDEX IF NOT EXISTS idx_sessions_unlisted ON sessions (id)
      WHERE archived OR auto_archived OR hidden`,
  ],
};
