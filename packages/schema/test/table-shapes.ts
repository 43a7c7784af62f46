import type { HermesDatabase } from "@hermes/schema";
import type { ColumnType } from "kysely";

// What Kysely sees of one column: the type a SELECT returns and the type an INSERT accepts.
type SelectOf<C> = C extends ColumnType<infer S, unknown, unknown> ? S : C;
type InsertOf<C> = C extends ColumnType<unknown, infer I, unknown> ? I : C;

/**
 * Each column of a table interface reduced to two literal booleans: may a row hold `null`, and
 * may an insert leave it out (`Generated`). Writing the literal below against this type makes
 * the compiler check the table interfaces; the runtime test checks the literal against SQLite.
 */
export type ShapesOf<T> = {
  [K in keyof T]-?: {
    nullable: null extends SelectOf<T[K]> ? true : false;
    generated: undefined extends InsertOf<T[K]> ? true : false;
  };
};

export type DatabaseShapes = { [T in keyof HermesDatabase]: ShapesOf<HermesDatabase[T]> };

const n = { nullable: true, generated: false } as const;
const required = { nullable: false, generated: false } as const;
const defaulted = { nullable: true, generated: true } as const;

/** The shape of every column of `HermesDatabase`, checked by `tsc` (see table-types.test-d.ts). */
export const DATABASE_SHAPES: DatabaseShapes = {
  schema_version: { version: required },
  sessions: {
    id: required,
    source: required,
    user_id: n,
    model: n,
    model_config: n,
    system_prompt: n,
    parent_session_id: n,
    started_at: required,
    ended_at: n,
    end_reason: n,
    message_count: defaulted,
    tool_call_count: defaulted,
    input_tokens: defaulted,
    output_tokens: defaulted,
    cache_read_tokens: defaulted,
    cache_write_tokens: defaulted,
    reasoning_tokens: defaulted,
    billing_provider: n,
    billing_base_url: n,
    billing_mode: n,
    estimated_cost_usd: n,
    actual_cost_usd: n,
    cost_status: n,
    cost_source: n,
    pricing_version: n,
    title: n,
    api_call_count: defaulted,
  },
  messages: {
    id: { nullable: false, generated: true },
    session_id: required,
    role: required,
    content: n,
    tool_call_id: n,
    tool_calls: n,
    tool_name: n,
    timestamp: required,
    token_count: n,
    finish_reason: n,
    reasoning: n,
    reasoning_content: n,
    reasoning_details: n,
    codex_reasoning_items: n,
    codex_message_items: n,
  },
  state_meta: { key: required, value: n },
};
