import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { ChangeFeed, StoreChange } from "../live/change-feed.js";

/** Server-sent events: a `change` event for each change the feed sees, a comment every 15 s. */
export function liveRoutes(feed: ChangeFeed): Hono {
  const api = new Hono();
  api.get("/live", (c) =>
    streamSSE(c, async (stream) => {
      let wake: (() => void) | undefined;
      const pending: StoreChange[] = [];
      const unsubscribe = feed.subscribe((change) => {
        pending.push(change);
        wake?.();
      });
      stream.onAbort(() => {
        unsubscribe();
        wake?.();
      });
      await stream.writeSSE({ event: "ready", data: "{}" });
      while (!stream.aborted && !stream.closed) {
        const change = pending.shift();
        if (change !== undefined) {
          await stream.writeSSE({ event: "change", data: JSON.stringify(change) });
          continue;
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 15_000);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
        if (pending.length === 0 && !stream.aborted) await stream.write(": keep-alive\n\n");
      }
      unsubscribe();
    }),
  );
  return api;
}
