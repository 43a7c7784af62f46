import type { SessionStore } from "@hermes/store";
import { CliError } from "./cli-error.js";
import type { SessionWithMessages } from "./render/session-view.js";

/**
 * Store methods beyond API.md's first list (issues 5 and 6), typed by what the CLI needs from
 * them. Looked up at run time so the CLI builds and runs against a store that has not got
 * every one of them yet; a command whose method is missing says so instead of crashing.
 */
export interface StoreExtensions {
  exportStream(o?: {
    source?: string;
    sessionIds?: string[];
    since?: number;
  }): AsyncIterable<SessionWithMessages>;
  importSessions(source: string | AsyncIterable<unknown>, o?: Record<string, unknown>): Promise<unknown>;
  forkSession(id: string, o?: { atMessageId?: number; newId?: string; title?: string }): Promise<unknown>;
  usageStats(o: { groupBy?: "source" | "model" | "day"; since?: number; until?: number }): Promise<unknown>;
  getLineage(id: string): Promise<unknown>;
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
