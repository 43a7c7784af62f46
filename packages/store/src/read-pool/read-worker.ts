// A reader of the pool: a read-only store on the same file, answering the whitelisted read
// methods (read-methods.ts) one request at a time, each in one read transaction, and streams
// batch by batch (the pool asks for the next batch only when it needs it: back-pressure).
import { parentPort, workerData } from "node:worker_threads";
import { type ExportStreamOptions, exportFilter } from "@hermes/core";
import { lowerBackgroundThreadPriority } from "../background-thread-priority.js";
import { openReadOnlyParts, readOnlyContext } from "../open-read-only-store.js";
import { exportEvents } from "../portable/export-stream.js";
import { SessionStore } from "../session-store.js";
import { POOL_CALLS, POOL_STREAMS, type WorkerReply, type WorkerRequest } from "./read-methods.js";
import { serializeError } from "./worker-errors.js";

const port = parentPort;
if (port === null) throw new Error("read-worker runs in a worker thread");
const send = (reply: WorkerReply) => port.postMessage(reply);
// A read worker competes for the CPU with the caller's thread, whose event loop it must not delay.
lowerBackgroundThreadPriority();

/** Most items, and most rows (messages) in all, one stream batch carries. */
const BATCH_ITEMS = 64;
const BATCH_ROWS = 1000;

type Opened = ReturnType<typeof open>;
function open(path: string, tempFiles: boolean) {
  const { state, writes, report } = openReadOnlyParts(path, { kind: "requested" }, { tempFiles });
  const clock = () => Date.now() / 1000;
  const version = String(state.file.conn.db.prepare("SELECT sqlite_version()").pluck().get());
  const store = new SessionStore({
    conn: state.file.conn,
    writes,
    migration: report,
    clock,
    sqliteVersion: version,
    readOnly: state,
  });
  return { store, state, ctx: readOnlyContext(state, writes, clock) };
}

let opened: Opened;
try {
  const data = workerData as { path: string; tempFiles: boolean };
  opened = open(data.path, data.tempFiles);
  send({ type: "ready" });
} catch (error) {
  send({ type: "failed", error: serializeError(error) });
  throw error;
}
const streams = new Map<number, AsyncIterator<unknown>>();

/** Runs `fn` in one read transaction on the store's connection (one snapshot for all its statements). */
async function inSnapshot<T>(fn: () => Promise<T> | T): Promise<T> {
  const conn = opened.state.file.conn;
  const own = !conn.inTransaction;
  if (own) conn.exec("BEGIN");
  try {
    return await fn();
  } finally {
    if (own && conn.inTransaction) conn.exec("COMMIT");
  }
}

function startStream(method: string, args: unknown[]): AsyncIterator<unknown> {
  const store = opened.store;
  if (method === "exportEvents") {
    return exportEvents(opened.ctx, exportFilter(args[0] as ExportStreamOptions | undefined))[
      Symbol.asyncIterator
    ]();
  }
  if (method === "exportStream")
    return store.exportStream(args[0] as ExportStreamOptions)[Symbol.asyncIterator]();
  return store.iterMessages(args[0] as string, args[1] as object)[Symbol.asyncIterator]();
}

function weight(item: unknown): number {
  const messages = (item as { messages?: unknown[] } | null)?.messages;
  return Array.isArray(messages) ? messages.length + 1 : 1;
}

async function nextBatch(iterator: AsyncIterator<unknown>): Promise<{ items: unknown[]; done: boolean }> {
  const items: unknown[] = [];
  let rows = 0;
  while (items.length < BATCH_ITEMS && rows < BATCH_ROWS) {
    const step = await iterator.next();
    if (step.done) return { items, done: true };
    items.push(step.value);
    rows += weight(step.value);
  }
  return { items, done: false };
}

async function answer(req: WorkerRequest): Promise<unknown> {
  switch (req.type) {
    case "call": {
      if (!POOL_CALLS.has(req.method)) throw new Error(`not a read of the pool: ${req.method}`);
      const fn = (opened.store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[
        req.method
      ]!;
      return inSnapshot(() => fn.apply(opened.store, req.args));
    }
    case "open": {
      if (!POOL_STREAMS.has(req.method)) throw new Error(`not a stream of the pool: ${req.method}`);
      streams.set(req.id, startStream(req.method, req.args));
      return req.id;
    }
    case "next": {
      const iterator = streams.get(req.stream);
      if (iterator === undefined) return { items: [], done: true };
      const batch = await inSnapshot(() => nextBatch(iterator));
      if (batch.done) streams.delete(req.stream);
      return batch;
    }
    case "end": {
      const iterator = streams.get(req.stream);
      streams.delete(req.stream);
      await iterator?.return?.();
      return null;
    }
  }
}

port.on("message", (req: WorkerRequest) => {
  answer(req).then(
    (value) => {
      try {
        send({ type: "reply", id: req.id, ok: true, value });
      } catch (error) {
        send({ type: "reply", id: req.id, ok: false, error: serializeError(error) });
      }
    },
    (error: unknown) => {
      if (req.type === "next") streams.delete(req.stream);
      send({ type: "reply", id: req.id, ok: false, error: serializeError(error) });
    },
  );
});
