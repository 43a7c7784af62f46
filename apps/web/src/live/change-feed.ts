import { setTimeout as sleep } from "node:timers/promises";
import type { SessionStore } from "@hermes/core";

/** Something changed in the store: sessions or messages were added, changed or removed. */
export interface StoreChange {
  /** When the change was seen (Unix epoch milliseconds). */
  seenAt: number;
  /** The sessions that changed, when the feed knows them; `null`: any may have. */
  sessionIds: string[] | null;
}

/** Tells listeners about changes to the store (the Live view's server-sent events). */
export interface ChangeFeed {
  /** Calls `listener` on each change until the returned function is called. */
  subscribe(listener: (change: StoreChange) => void): () => void;
  /** Stops watching; listeners hear nothing more. */
  close(): void;
}

/**
 * A feed that compares the store's session and message counts every `intervalMs` (one check
 * for all listeners, and none while nobody listens). It sees appends, new sessions and
 * deletions from any process, on every backend; not renames, which the page that made them
 * shows itself.
 */
export function pollingChangeFeed(store: SessionStore, o: { intervalMs?: number } = {}): ChangeFeed {
  const intervalMs = o.intervalMs ?? 1000;
  const listeners = new Set<(change: StoreChange) => void>();
  let looping = false;
  let closed = false;
  let wake: AbortController | undefined;
  const loop = async () => {
    let last: string | undefined;
    while (!closed && listeners.size > 0) {
      try {
        const [sessions, messages] = await Promise.all([store.sessionCount(), store.messageCount()]);
        const now = `${sessions}/${messages}`;
        if (last !== undefined && now !== last) {
          const change: StoreChange = { seenAt: Date.now(), sessionIds: null };
          for (const listener of listeners) listener(change);
        }
        last = now;
      } catch {
        // A busy store: look again at the next tick (a closed one ends the loop below).
      }
      wake = new AbortController();
      await sleep(intervalMs, undefined, { signal: wake.signal }).catch(() => undefined);
    }
    looping = false;
  };
  return {
    subscribe(listener) {
      listeners.add(listener);
      if (!looping && !closed) {
        looping = true;
        void loop();
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) wake?.abort();
      };
    },
    close() {
      closed = true;
      listeners.clear();
      wake?.abort();
    },
  };
}
