/**
 * The store methods a read worker runs, and nothing else: every one reads (a worker's
 * connection is read-only anyway, so a write could not land, but a call outside this list is
 * refused before it reaches the store). Streams are iterables answered batch by batch.
 */
export const POOL_CALLS: ReadonlySet<string> = new Set([
  "getSession",
  "resolveSessionId",
  "sessionCount",
  "messageCount",
  "searchSessions",
  "listSessionsRich",
  "getCompressionTip",
  "resolveResumeSessionId",
  "getSessionTitle",
  "getSessionByTitle",
  "resolveSessionByTitle",
  "getNextTitleInLineage",
  "getMessages",
  "getMessagesAsConversation",
  "searchMessages",
  "exportSession",
  "exportAll",
  "getMeta",
  "exportSessionMarkdown",
  "getConversationWindow",
  "getMessagesAsAnthropic",
  "getLineage",
  "listSessionPage",
  "getMessagePage",
  "usageStats",
]);

/** Streams a worker runs: the store's two iterables and the export's events (for `exportJsonl`). */
export const POOL_STREAMS: ReadonlySet<string> = new Set(["exportStream", "iterMessages", "exportEvents"]);

/** A call to a worker. */
export type WorkerRequest =
  | { type: "call"; id: number; method: string; args: unknown[] }
  | { type: "open"; id: number; method: string; args: unknown[] }
  | { type: "next"; id: number; stream: number }
  | { type: "end"; id: number; stream: number };

/** A worker's answer to one request (`value` of a `next`: `{ items, done }`). */
export type WorkerReply =
  | { type: "ready" }
  | { type: "failed"; error: SerializedError }
  | { type: "reply"; id: number; ok: true; value: unknown }
  | { type: "reply"; id: number; ok: false; error: SerializedError };

/** An error as it crosses the thread boundary (own properties, name, message, the cause's code). */
export interface SerializedError {
  name: string;
  message: string;
  props: Record<string, unknown>;
  cause?: { name: string; message: string; code?: unknown };
}
