import type { Worker } from "node:worker_threads";
import type { ConnectionPragmas } from "../database-connection.js";
import { terminateWorker } from "../terminate-worker.js";
import { startThread } from "../threads/start-thread.js";

/** What the builder's thread is given (`cjk-build-worker.ts`). */
export interface CjkBuildWorkerData {
  readonly path: string;
  readonly pragmas: ConnectionPragmas;
  /** Patience of one write transaction under contention, as the store's own writes. */
  readonly deadlineMs: number;
  /** Take turns with other writers through the file's writers' queue (the store's `fairWrites`). */
  readonly fairWrites: boolean;
  /** Time one write transaction should hold the lock, in ms (its size adapts to it). */
  readonly targetMs: number;
  /** Pause between two transactions, in ms. */
  readonly pauseMs: number;
}

/** How a build ended, as the thread reports it. */
export type CjkBuildMessage = { kind: "done" } | { kind: "stopped" } | { kind: "failed"; message: string };

/** Longest wait, in ms, for the thread to stop between two transactions before it is terminated. */
const STOP_GRACE_MS = 2_000;

/**
 * One run of the builder on a worker thread, from start to the end of its catch-up (it exits
 * then). `stop()` asks it to stop after its current transaction and waits for the thread to end;
 * a thread that does not end in time (a write waiting for a lock another connection holds) is
 * terminated, which SQLite survives as it survives a killed process (the open transaction, if
 * any, rolls back).
 */
export class CjkBuildThread {
  readonly #worker: Worker;
  readonly #ended: Promise<void>;
  #outcome: CjkBuildMessage | undefined;

  constructor(data: CjkBuildWorkerData, onEnd: (outcome: CjkBuildMessage) => void) {
    this.#worker = startThread("cjk-build-worker", data);
    // The builder never keeps the process alive: an idle program may exit mid-build (it resumes).
    this.#worker.unref();
    this.#worker.on("message", (m: CjkBuildMessage) => {
      this.#outcome = m;
    });
    this.#ended = new Promise<void>((resolve) => {
      this.#worker.on("error", (e) => {
        this.#outcome ??= { kind: "failed", message: e.message };
      });
      this.#worker.on("exit", (code) => {
        onEnd(this.#outcome ?? { kind: "failed", message: `the builder's thread ended (exit code ${code})` });
        resolve();
      });
    });
  }

  /** Asks the thread to stop between two transactions; resolves once it has ended. */
  async stop(): Promise<void> {
    this.#worker.postMessage("stop");
    const timer = setTimeout(() => void terminateWorker(this.#worker), STOP_GRACE_MS);
    try {
      await this.#ended;
    } finally {
      clearTimeout(timer);
    }
  }
}
