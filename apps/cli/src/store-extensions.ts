import type { SessionRow, SessionStore } from "@hermes/store";
import { CliError } from "./cli-error.js";
import type { SessionWithMessages } from "./render/session-view.js";

/** `usageStats` rows: one per source, model or UTC day. */
export interface UsageRow {
  group: string | null;
  sessions: number;
  messages: number;
  tool_calls: number;
  api_calls: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  estimated_cost_usd: number | null;
  actual_cost_usd: number | null;
}

/** What `importSessions` reports. */
export interface ImportOutcome {
  sessionsImported: number;
  messagesImported: number;
  sessionsUnchanged: number;
  sessionsReplaced: number;
  conflicts: Array<{ id: string; line: number }>;
  detached: Array<{ id: string; line: number }>;
  invalid: Array<{ line: number; message: string }>;
}

/** One session of a lineage and its link to its parent. */
export interface LineageEntry {
  id: string;
  title: string | null;
  depth: number;
  link: string | null;
}

/**
 * Store methods from issues 5 and 6 (portable sessions, search index maintenance), typed by what
 * the CLI uses. Looked up at run time, so the CLI builds and runs against a store that does not
 * have every one of them: a command whose method is missing says so in one line.
 */
export interface StoreExtensions {
  exportStream(o?: {
    source?: string;
    sessionIds?: string[];
    since?: number;
  }): AsyncIterable<SessionWithMessages>;
  exportJsonl(
    destination: string | NodeJS.WritableStream,
    o?: { source?: string; sessionIds?: string[]; since?: number },
  ): Promise<{ sessions: number; messages: number; bytes: number }>;
  importSessions(
    source: string,
    o?: {
      onConflict?: "skip" | "replace";
      onInvalid?: "abort" | "skip";
      missingParent?: "reject" | "detach";
    },
  ): Promise<ImportOutcome>;
  forkSession(
    id: string,
    o?: { atMessageId?: number; newId?: string; title?: string | null },
  ): Promise<SessionRow>;
  usageStats(o: {
    groupBy: "source" | "model" | "day";
    since?: number;
    until?: number;
    source?: string;
  }): Promise<UsageRow[]>;
  getLineage(id: string): Promise<{
    root_id: string;
    ancestors: LineageEntry[];
    descendants: LineageEntry[];
    session: LineageEntry;
  } | null>;
  verifySearchIndex(): Promise<unknown>;
  rebuildSearchIndex(o?: { onProgress?: (p: unknown) => void }): Promise<unknown>;
}

/** Whether the store has `name`. */
export function hasExtension(store: SessionStore, name: keyof StoreExtensions): boolean {
  return typeof (store as unknown as Record<string, unknown>)[name] === "function";
}

/** The store's `name` method, bound, or a one-line error naming what is missing. */
export function extension<K extends keyof StoreExtensions>(store: SessionStore, name: K): StoreExtensions[K] {
  const fn = (store as unknown as Record<string, unknown>)[name];
  if (typeof fn !== "function") {
    throw new CliError(`This build of @hermes/store has no ${name}() yet; this command needs it`);
  }
  return fn.bind(store) as StoreExtensions[K];
}
