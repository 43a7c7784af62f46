/**
 * The core tables and indexes of `state.db` at schema v11, as the reference writes them.
 *
 * The text is a compatibility contract: SQLite stores each `CREATE` statement verbatim in
 * `sqlite_master` (minus `IF NOT EXISTS`), and a file created by us must hold the same SQL text
 * as one created by Hermes Agent, whitespace included. Do not reformat.
 */

/** `CREATE TABLE` statements of the four core tables, keyed by table name. */
export const CORE_TABLES = {
  schema_version: `CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL
)`,
  sessions: `CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0,
    billing_provider TEXT,
    billing_base_url TEXT,
    billing_mode TEXT,
    estimated_cost_usd REAL,
    actual_cost_usd REAL,
    cost_status TEXT,
    cost_source TEXT,
    pricing_version TEXT,
    title TEXT,
    api_call_count INTEGER DEFAULT 0,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
)`,
  messages: `CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT,
    reasoning TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    codex_reasoning_items TEXT,
    codex_message_items TEXT
)`,
  state_meta: `CREATE TABLE IF NOT EXISTS state_meta (
    key TEXT PRIMARY KEY,
    value TEXT
)`,
} as const;

/** Name of a core table. */
export type CoreTableName = keyof typeof CORE_TABLES;

/** Secondary indexes created together with the core tables. */
export const CORE_INDEXES = {
  idx_sessions_source: "CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source)",
  idx_sessions_parent: "CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id)",
  idx_sessions_started: "CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC)",
  idx_messages_session: "CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp)",
} as const;

/**
 * The unique partial index on titles. The reference creates it after the version steps, on
 * every open; a file that already holds duplicate titles cannot get it (see `TITLE_INDEX`
 * handling in the migration runner).
 */
export const TITLE_INDEX_NAME = "idx_sessions_title_unique";
export const TITLE_INDEX_SQL =
  "CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL";

/** The schema version this package writes; files above it are opened without being altered. */
export const SCHEMA_VERSION = 11;
