/**
 * The session browser's server for the `web` scenario, in its own process, so the event-loop
 * delay it reports is the server's alone (the bench's own synchronous baseline calls would hold
 * a shared loop). Messages: `{ db, warm }` starts it and answers `{ type: "listening", origin,
 * token, startMs }` (`warm: false`: a read-only store opened without `warmReaders`, served as
 * `serve` did before it warmed its read workers);
 * `{ type: "loop-reset" }` and `{ type: "loop-read" }` (answered with `{ type: "loop", … }`)
 * read monitorEventLoopDelay (1 ms resolution); `{ type: "stop" }` ends it.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { SessionStore } from "@hermes/store";
import { openSessionStore } from "@hermes/store";
import { serveSessionBrowser } from "@hermes/web";

export type WebWorkerRequest =
  | { type: "start"; db: string; warm: boolean }
  | { type: "loop-reset" }
  | { type: "loop-read" }
  | { type: "stop" };

export type WebWorkerReply =
  | { type: "listening"; origin: string; token: string; port: number; startMs: number }
  | { type: "loop"; p50Ms: number; p99Ms: number; maxMs: number; samples: number }
  | { type: "error"; reason: string };

const send = (reply: WebWorkerReply) => process.send?.(reply);
const loop = monitorEventLoopDelay({ resolution: 1 });
let server: Awaited<ReturnType<typeof serveSessionBrowser>> | undefined;
let ownStore: SessionStore | undefined;
const ms = (ns: number) => Number((ns / 1e6).toFixed(1));

process.on("message", async (m: WebWorkerRequest) => {
  try {
    if (m.type === "start") {
      const t0 = performance.now();
      if (m.warm) server = await serveSessionBrowser({ db: m.db, port: 0 });
      else {
        ownStore = await openSessionStore({ path: m.db, readOnly: true });
        server = await serveSessionBrowser({ store: ownStore, port: 0 });
      }
      const startMs = Number((performance.now() - t0).toFixed(1));
      loop.enable();
      send({ type: "listening", origin: server.origin, token: server.token, port: server.port, startMs });
    } else if (m.type === "loop-reset") {
      loop.reset();
    } else if (m.type === "loop-read") {
      send({
        type: "loop",
        p50Ms: ms(loop.percentile(50)),
        p99Ms: ms(loop.percentile(99)),
        maxMs: ms(loop.max),
        samples: loop.count,
      });
    } else if (m.type === "stop") {
      loop.disable();
      await server?.close();
      await ownStore?.close();
      process.exit(0);
    }
  } catch (error) {
    send({ type: "error", reason: error instanceof Error ? error.message : String(error) });
  }
});
