import { parentPort, workerData } from "node:worker_threads";
import { openSessionStore } from "../open-session-store.js";
import type { SessionStore } from "../session-store.js";

/** A reader of the pool: a read-only store on the same file, answering calls by method name. */
interface Call {
  id: number;
  method: string;
  args: unknown[];
}

const port = parentPort;
if (port === null) throw new Error("read-worker runs in a worker thread");
const ready: Promise<SessionStore> = openSessionStore({
  path: (workerData as { path: string }).path,
  readOnly: true,
});

port.on("message", (call: Call) => {
  void (async () => {
    try {
      const store = await ready;
      const fn = (store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[call.method];
      if (typeof fn !== "function") throw new Error(`not a read: ${call.method}`);
      port.postMessage({ id: call.id, ok: true, value: await fn.apply(store, call.args) });
    } catch (error) {
      const e = error as Error;
      port.postMessage({ id: call.id, ok: false, error: { ...e, name: e.name, message: e.message } });
    }
  })();
});
