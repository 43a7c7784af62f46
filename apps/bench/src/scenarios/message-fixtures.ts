import type { AppendMessageInput } from "@hermes/store";
import type Database from "better-sqlite3";
import { ConversationGenerator, type GeneratedMessage } from "../data/conversation-generator.js";
import { SeededRandom } from "../data/seeded-random.js";

/** `count` generated messages in conversation order, the same for a given seed. */
export function generateMessages(seed: number, count: number): GeneratedMessage[] {
  const gen = new ConversationGenerator(new SeededRandom(seed));
  return Array.from({ length: count }, () => gen.next());
}

/** The store's input for a generated message. */
export function toAppendInput(sessionId: string, m: GeneratedMessage, suffix = ""): AppendMessageInput {
  return {
    sessionId,
    role: m.role,
    // A suffix (a unique marker) turns empty content into the marker alone, so every row is distinct.
    content: suffix === "" ? m.content : (m.content ?? "") + suffix,
    toolName: m.tool_name,
    toolCalls: m.tool_call_list,
    toolCallId: m.tool_call_id,
    tokenCount: m.token_count,
    finishReason: m.finish_reason,
    reasoning: m.reasoning,
  };
}

/**
 * What the reference's append writes for a message's tool calls: the `tool_calls` column (JSON,
 * or null when there are none) and how much it adds to the session's `tool_call_count`.
 */
function toolCallColumns(m: AppendMessageInput): { toolCalls: string | null; delta: number } {
  const calls = m.toolCalls;
  const toolCalls =
    calls === null || calls === undefined || (Array.isArray(calls) && calls.length === 0)
      ? null
      : JSON.stringify(calls);
  const delta =
    calls === null || calls === undefined || m.role === "tool" ? 0 : Array.isArray(calls) ? calls.length : 1;
  return { toolCalls, delta };
}

/**
 * The baseline's append: the statements the store runs (insert the row, bump the session's
 * counters) with prepared statements, in one `BEGIN IMMEDIATE` transaction, and a PASSIVE
 * checkpoint every 50 writes as the store and the reference do.
 */
export class RawAppender {
  readonly #db: Database.Database;
  readonly #append: (input: AppendMessageInput) => number;
  #writes = 0;

  constructor(db: Database.Database) {
    this.#db = db;
    const insert = db.prepare(
      `insert into "messages" ("session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name", "timestamp",
        "token_count", "finish_reason", "reasoning", "reasoning_content", "reasoning_details", "codex_reasoning_items",
        "codex_message_items") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const bump = db.prepare(
      `update "sessions" set "message_count" = message_count + 1, "tool_call_count" = tool_call_count + ? where "id" = ?`,
    );
    const txn = db.transaction((m: AppendMessageInput): number => {
      const { toolCalls, delta } = toolCallColumns(m);
      const id = Number(
        insert.run(
          m.sessionId,
          m.role,
          m.content ?? null,
          m.toolCallId ?? null,
          toolCalls,
          m.toolName ?? null,
          Date.now() / 1000,
          m.tokenCount ?? null,
          m.finishReason ?? null,
          m.reasoning ?? null,
          null,
          null,
          null,
          null,
        ).lastInsertRowid,
      );
      bump.run(delta, m.sessionId);
      return id;
    });
    this.#append = (m) => txn.immediate(m);
  }

  append(m: AppendMessageInput): number {
    const id = this.#append(m);
    if (++this.#writes % 50 === 0) this.#db.pragma("wal_checkpoint(PASSIVE)");
    return id;
  }
}
