import type { Generated, Insertable, Selectable, Updateable } from "kysely";

/**
 * `sessions`: one row per agent session.
 *
 * The table interfaces follow the v11 DDL column by column (a test compares them with SQLite's
 * `PRAGMA table_info`): a column is `T | null` unless it is `NOT NULL` or the primary key (the
 * reference always writes keys, although SQLite would accept a NULL TEXT key), and `Generated`
 * when it has a `DEFAULT` or is the INTEGER PRIMARY KEY.
 */
export interface SessionsTable {
  id: string;
  source: string;
  user_id: string | null;
  model: string | null;
  /** JSON text of the model configuration, or `null`. */
  model_config: string | null;
  system_prompt: string | null;
  parent_session_id: string | null;
  /** Unix epoch seconds (float). */
  started_at: number;
  ended_at: number | null;
  end_reason: string | null;
  message_count: Generated<number | null>;
  tool_call_count: Generated<number | null>;
  input_tokens: Generated<number | null>;
  output_tokens: Generated<number | null>;
  cache_read_tokens: Generated<number | null>;
  cache_write_tokens: Generated<number | null>;
  reasoning_tokens: Generated<number | null>;
  billing_provider: string | null;
  billing_base_url: string | null;
  billing_mode: string | null;
  estimated_cost_usd: number | null;
  actual_cost_usd: number | null;
  cost_status: string | null;
  cost_source: string | null;
  pricing_version: string | null;
  title: string | null;
  api_call_count: Generated<number | null>;
}

/** `messages`: the full history of every session, in insertion order (`id` is AUTOINCREMENT). */
export interface MessagesTable {
  id: Generated<number>;
  session_id: string;
  role: string;
  content: string | null;
  tool_call_id: string | null;
  /** JSON text of the tool calls as stored (parsed by the store on read). */
  tool_calls: string | null;
  tool_name: string | null;
  /** Unix epoch seconds (float). */
  timestamp: number;
  token_count: number | null;
  finish_reason: string | null;
  reasoning: string | null;
  reasoning_content: string | null;
  reasoning_details: string | null;
  codex_reasoning_items: string | null;
  codex_message_items: string | null;
}

/** `state_meta`: small key/value settings (e.g. `last_auto_prune`). */
export interface StateMetaTable {
  key: string;
  value: string | null;
}

/** `schema_version`: one row holding the schema version (11). */
export interface SchemaVersionTable {
  version: number;
}

/** The Kysely database interface of `state.db`. */
export interface HermesDatabase {
  sessions: SessionsTable;
  messages: MessagesTable;
  state_meta: StateMetaTable;
  schema_version: SchemaVersionTable;
}

export type SessionRow = Selectable<SessionsTable>;
export type NewSession = Insertable<SessionsTable>;
export type SessionUpdate = Updateable<SessionsTable>;
export type MessageRow = Selectable<MessagesTable>;
export type NewMessage = Insertable<MessagesTable>;
export type MessageUpdate = Updateable<MessagesTable>;
export type StateMetaRow = Selectable<StateMetaTable>;
export type SchemaVersionRow = Selectable<SchemaVersionTable>;
