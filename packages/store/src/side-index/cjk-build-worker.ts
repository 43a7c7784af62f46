// The short-CJK index builder's thread: its own writable connection to the store's file, the
// same write path as the store (a write queue that waits for locks on timers and takes turns
// with other writers through the file's writers' queue), short transactions with a pause
// between them. It stops between two transactions when asked; every committed step is kept, so
// the next build resumes where this one stopped.
import { statSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { parentPort, workerData } from "node:worker_threads";
import { catchUpCjkIndex } from "@hermes/search";
import { lowerBackgroundThreadPriority } from "../background-thread-priority.js";
import { DatabaseConnection } from "../database-connection.js";
import { mapSqliteError } from "../sqlite-errors.js";
import { HandoffQueue } from "../write/handoff-queue.js";
import { DEFAULT_WRITE_POLICY } from "../write/write-policy.js";
import { WriteQueue } from "../write/write-queue.js";
import type { CjkBuildMessage, CjkBuildWorkerData } from "./cjk-build-thread.js";

const port = parentPort;
if (port === null) throw new Error("cjk-build-worker runs in a worker thread");
const data = workerData as CjkBuildWorkerData;
// The build is background work: the caller's thread keeps the CPU when both want it.
lowerBackgroundThreadPriority();

class Stopped extends Error {}
let stopping = false;
port.on("message", (m: unknown) => {
  if (m === "stop") stopping = true;
});

const post = (m: CjkBuildMessage) => port.postMessage(m);

/**
 * Sizes the build's transactions so each holds the write lock about `targetMs` (other writers
 * wait at most that long): the size follows the time per message of the last transaction.
 */
class ChunkPacing {
  static readonly MIN = 50;
  static readonly MAX = 2_000;
  readonly #targetMs: number;
  size = 200;

  constructor(targetMs: number) {
    this.#targetMs = targetMs;
  }

  /** `fn` timed as it runs inside the transaction (waits for the lock do not count). */
  timed<T>(fn: () => T): () => T {
    return () => {
      const started = performance.now();
      const result = fn();
      const perMessage = (performance.now() - started) / this.size;
      if (perMessage > 0) {
        const next = Math.round(this.#targetMs / perMessage);
        this.size = Math.max(ChunkPacing.MIN, Math.min(ChunkPacing.MAX, next));
      }
      return result;
    };
  }
}
const walSize = () => {
  try {
    return statSync(`${data.path}-wal`).size;
  } catch {
    return 0;
  }
};

let conn: DatabaseConnection | undefined;
let turns: HandoffQueue | undefined;
try {
  // The store's own durability (FULL by default), on purpose: with NORMAL the build's frames
  // would wait unsynced in the WAL, and the store's next commit on the caller's thread would
  // pay for syncing them (measured: commits of up to 0.9 s).
  conn = new DatabaseConnection(data.path, data.pragmas);
  turns = data.fairWrites ? HandoffQueue.open(data.path) : undefined;
  const writes = new WriteQueue(
    conn,
    // Frequent PASSIVE checkpoints here: the WAL frames the build writes are copied back on
    // this thread, not by the store's next checkpoint on the caller's thread.
    { ...DEFAULT_WRITE_POLICY, deadlineMs: data.deadlineMs, maxGroupSize: 1, checkpointEvery: 8 },
    walSize,
    undefined,
    turns,
  );
  const pace = new ChunkPacing(data.targetMs);
  try {
    await catchUpCjkIndex(conn, (label, fn) => writes.run(label, pace.timed(fn)), undefined, {
      chunk: () => pace.size,
      between: async () => {
        await sleep(data.pauseMs);
        if (stopping) throw new Stopped();
      },
    });
    post({ kind: "done" });
  } finally {
    await writes.whenIdle();
  }
} catch (error) {
  if (error instanceof Stopped) post({ kind: "stopped" });
  else {
    const mapped = mapSqliteError(error, data.path);
    post({ kind: "failed", message: mapped instanceof Error ? mapped.message : String(mapped) });
  }
} finally {
  turns?.close();
  conn?.close();
  port.close();
}
