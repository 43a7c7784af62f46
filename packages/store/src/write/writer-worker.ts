// The writer thread of a store (writer-thread.ts): the only writable connection of the store's
// process to its file, with the store's whole write path (the write queue and group commit, the
// writers' queue and shared commits, the checkpoint thread, WAL escalation, the short-CJK
// builder). It runs the writes of write-operations.ts by name, with the same functions as on the
// caller's thread; the caller opened (and migrated) the file before starting it.
import { parentPort, workerData } from "node:worker_threads";
import { DatabaseConnection } from "../database-connection.js";
import * as messages from "../operations/messages.js";
import { reviveError, serializeError } from "../read-pool/worker-errors.js";
import { CjkSideIndex } from "../side-index/cjk-side-index.js";
import { mapSqliteError } from "../sqlite-errors.js";
import type { StoreContext } from "../store-context.js";
import { callerClockReader } from "./caller-clock.js";
import { isWriteMethod, runWrite } from "./write-operations.js";
import { closeWritePath, openWritePath, type WritePath } from "./write-path.js";
import type { WriterCall, WriterReply, WriterRequest, WriterWorkerData } from "./writer-protocol.js";

if (parentPort === null) throw new Error("writer-worker runs in a worker thread");
const port = parentPort;
const data = workerData as WriterWorkerData;
const send = (reply: WriterReply) => port.postMessage(reply);

interface Writer {
  readonly conn: DatabaseConnection;
  readonly path: WritePath;
  readonly cjkIndex: CjkSideIndex;
  readonly ctx: StoreContext;
}

function open(): Writer {
  const { settings } = data;
  const conn = new DatabaseConnection(settings.path, settings.pragmas);
  let path: WritePath | undefined;
  try {
    // The caller's open set WAL mode and ran the migrations; the writer only writes, and its
    // checkpoints run on the checkpoint thread, as they would on the caller's side.
    conn.db.pragma("wal_autocheckpoint = 0");
    path = openWritePath(conn, settings);
    const writes = path.writes;
    if (data.corruption !== undefined) writes.noteError(reviveError(data.corruption, "the store"));
    const cjkIndex = new CjkSideIndex(
      () => conn,
      {
        path: settings.path,
        pragmas: data.cjk.pragmas,
        deadlineMs: settings.policy.deadlineMs,
        fairWrites: settings.fairWrites,
        mode: data.cjk.mode,
      },
      { changed: (cjk) => send({ type: "cjk", cjk }) },
    );
    const now =
      data.clock === undefined
        ? () => Date.now() / 1000
        : callerClockReader(data.clock, () => send({ type: "clock" }));
    const ctx: StoreContext = { conn, writes, path: settings.path, now, cjkIndex };
    path.shared?.register("appendMessage", messages.sharedAppends(ctx));
    cjkIndex.opened();
    return { conn, path, cjkIndex, ctx };
  } catch (error) {
    path?.turns?.close();
    conn.close();
    throw error;
  }
}

let writer: Writer;
try {
  writer = open();
  send({ type: "ready", stats: writer.path.writes.stats, cjk: writer.cjkIndex.builder });
} catch (error) {
  send({ type: "failed", error: serializeError(mapSqliteError(error, data.settings.path)) });
  throw error;
}

/** The call's arguments, with a progress callback posting back to the caller where it asked for one. */
function argsOf(call: WriterCall): unknown[] {
  if (call.progress !== true) return call.args;
  return [{ onProgress: (progress: unknown) => send({ type: "progress", id: call.id, progress }) }];
}

function start(call: WriterCall): void {
  let result: Promise<unknown>;
  try {
    if (!isWriteMethod(call.method)) throw new Error(`not a write of the store: ${call.method}`);
    result = runWrite(writer.ctx, call.method, argsOf(call) as never);
  } catch (error) {
    result = Promise.reject(error);
  }
  result.then(
    (value) => {
      const stats = writer.path.writes.stats;
      try {
        send({ type: "reply", id: call.id, ok: true, value, stats });
      } catch (error) {
        send({ type: "reply", id: call.id, ok: false, error: serializeError(error), stats });
      }
    },
    (error: unknown) => {
      writer.path.writes.noteError(error);
      send({
        type: "reply",
        id: call.id,
        ok: false,
        error: serializeError(error),
        stats: writer.path.writes.stats,
      });
    },
  );
}

async function close(): Promise<void> {
  await writer.cjkIndex.close();
  await closeWritePath(writer.path);
  const stats = writer.path.writes.stats;
  writer.conn.close();
  send({ type: "closed", stats });
  port.close();
}

port.on("message", (m: WriterRequest) => {
  switch (m.type) {
    case "calls":
      // Started one after the other in this turn, as the caller made them in one tick: the first
      // commits inside its call when the queue is idle, the others form the next group.
      for (const call of m.calls) start(call);
      return;
    case "corrupt":
      writer.path.writes.noteError(reviveError(m.error, "a read"));
      return;
    case "close":
      void close();
      return;
  }
});
