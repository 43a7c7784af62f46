import { useEffect, useRef } from "preact/hooks";

type Listener = (change: { seenAt: number; sessionIds: string[] | null }) => void;

const listeners = new Set<Listener>();
let source: EventSource | null = null;

function connect() {
  if (source !== null) return;
  // One stream for the whole page; EventSource reconnects by itself after an error.
  source = new EventSource("/api/live");
  source.addEventListener("change", (event) => {
    const change = JSON.parse((event as MessageEvent<string>).data);
    for (const listener of listeners) listener(change);
  });
}

/** Calls `onChange` whenever the server sees the store change (server-sent events). */
export function useLiveChanges(onChange: Listener, enabled = true): void {
  const latest = useRef(onChange);
  latest.current = onChange;
  useEffect(() => {
    if (!enabled) return;
    const listener: Listener = (c) => latest.current(c);
    listeners.add(listener);
    connect();
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0) {
        source?.close();
        source = null;
      }
    };
  }, [enabled]);
}

/**
 * Wraps a refresh so that calls while one runs collapse into one more run after it: a page
 * that takes longer to read than changes arrive never piles up requests.
 */
export function coalesced(run: () => Promise<unknown>): () => void {
  let running = false;
  let again = false;
  const go = () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void run().finally(() => {
      running = false;
      if (again) {
        again = false;
        go();
      }
    });
  };
  return go;
}
