/**
 * The session browser's server for the `web` scenario, in its own process, so the event-loop
 * delay it reports is the server's alone (the bench's own synchronous baseline calls would hold
 * a shared loop). Messages: `{ db }` starts it and answers `{ type: "listening", origin, token }`;
 * `{ type: "loop-reset" }` and `{ type: "loop-read" }` (answered with `{ type: "loop", … }`)
 * read monitorEventLoopDelay (1 ms resolution); `{ type: "stop" }` ends it.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { serveSessionBrowser } from "@hermes/web";

export type WebWorkerRequest =
  | { type: "start"; db: string }
  | { type: "loop-reset" }
  | { type: "loop-read" }
  | { type: "stop" };

export type WebWorkerReply =
  | { type: "listening"; origin: string; token: string; port: number }
  | { type: "loop"; p50Ms: number; p99Ms: number; maxMs: number; samples: number }
  | { type: "error"; reason: string };

const send = (reply: WebWorkerReply) => process.send?.(reply);
const loop = monitorEventLoopDelay({ resolution: 1 });
let server: Awaited<ReturnType<typeof serveSessionBrowser>> | undefined;
const ms = (ns: number) => Number((ns / 1e6).toFixed(1));

process.on("message", async (m: WebWorkerRequest) => {
  try {
    if (m.type === "start") {
      server = await serveSessionBrowser({ db: m.db, port: 0 });
      loop.enable();
      send({ type: "listening", origin: server.origin, token: server.token, port: server.port });
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
      process.exit(0);
    }
  } catch (error) {
    send({ type: "error", reason: error instanceof Error ? error.message : String(error) });
  }
});
