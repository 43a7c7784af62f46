// The writer thread of a store (writer-thread.ts): the only writable connection of the store's
// process to its file, with the store's whole write path (the write queue and group commit, the
// writers' queue and shared commits, WAL checkpoints and escalation, the short-CJK
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
import type {
  WriterAnswer,
  WriterCall,
  WriterReply,
  WriterRequest,
  WriterWorkerData,
} from "./writer-protocol.js";

if (parentPort === null) throw new Error("writer-worker runs in a worker thread");
const port = parentPort;
const data = workerData as WriterWorkerData;

/**
 * Answers waiting to be posted. The answers of one group commit are posted in one message, so
 * that their callers resume in one tick and their next writes, made in that tick, reach this
 * thread together and group again (posted one by one, each next write came alone and committed
 * alone: a fsync each).
 */
let answers: WriterAnswer[] = [];

function answer(a: WriterAnswer): void {
  answers.push(a);
  if (answers.length === 1) queueMicrotask(postAnswers);
}

function postAnswers(): void {
  const batch = answers;
  answers = [];
  if (batch.length === 0) return;
  const stats = writer.path.writes.stats;
  try {
    port.postMessage({ type: "replies", answers: batch, stats } satisfies WriterReply);
  } catch {
    // A value that cannot be copied back: that call fails alone.
    for (const a of batch) {
      try {
        port.postMessage({ type: "replies", answers: [a], stats } satisfies WriterReply);
      } catch (error) {
        const failed: WriterAnswer = { id: a.id, ok: false, error: serializeError(error) };
        port.postMessage({ type: "replies", answers: [failed], stats } satisfies WriterReply);
      }
    }
  }
}

/** Posts `m` after the answers waiting (nothing overtakes an answer). */
function send(m: WriterReply): void {
  postAnswers();
  port.postMessage(m);
}

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
    // The caller's open set WAL mode and ran the migrations; the writer only writes, and runs
    // the write path's checkpoints itself (SQLite's own inside COMMIT off, as on the caller's side).
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
    (value) => answer({ id: call.id, ok: true, value }),
    (error: unknown) => {
      writer.path.writes.noteError(error);
      answer({ id: call.id, ok: false, error: serializeError(error) });
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
      // The calls the caller made in one tick: started together, they form one group.
      writer.path.writes.together(() => {
        for (const call of m.calls) start(call);
      });
      return;
    case "corrupt":
      writer.path.writes.noteError(reviveError(m.error, "a read"));
      return;
    case "buildCjk":
      writer.cjkIndex.continueBuild();
      // Whether it started or found nothing left to do, the caller hears how the builder stands.
      send({ type: "cjk", cjk: writer.cjkIndex.builder });
      return;
    case "close":
      void close();
      return;
  }
});
