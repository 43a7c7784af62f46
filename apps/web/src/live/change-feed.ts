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

/**
 * The change feed for `store`: its own `watchChanges` where it has one (the SQLite store: a
 * `PRAGMA data_version` check per tick, then the new rows by rowid, so each change names its
 * sessions), else {@link pollingChangeFeed} (PostgreSQL). One watch for all listeners, none while
 * nobody listens. `watchChanges` reports new sessions and messages; a deletion by another process
 * shows at the next reload.
 */
export function storeChangeFeed(store: SessionStore, o: { intervalMs?: number } = {}): ChangeFeed {
  if (store.watchChanges === undefined) return pollingChangeFeed(store, o);
  const watch = store.watchChanges.bind(store);
  const intervalMs = o.intervalMs ?? 250;
  const listeners = new Set<(change: StoreChange) => void>();
  let running: AbortController | undefined;
  let closed = false;
  const loop = async (stop: AbortController) => {
    while (!stop.signal.aborted) {
      try {
        for await (const c of watch({ signal: stop.signal, intervalMs })) {
          const sessionIds = [...new Set([...c.newSessionIds, ...c.updatedSessionIds])];
          const change: StoreChange = { seenAt: Date.now(), sessionIds };
          for (const listener of listeners) listener(change);
        }
      } catch {
        // A busy store: watch again after a pause (a stopped feed ends the loop).
        await sleep(intervalMs, undefined, { signal: stop.signal }).catch(() => undefined);
      }
    }
  };
  return {
    subscribe(listener) {
      listeners.add(listener);
      if (running === undefined && !closed) {
        running = new AbortController();
        void loop(running);
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) {
          running?.abort();
          running = undefined;
        }
      };
    },
    close() {
      closed = true;
      listeners.clear();
      running?.abort();
      running = undefined;
    },
  };
}
