import type { Worker } from "node:worker_threads";
import type { ConnectionPragmas } from "../database-connection.js";
import { terminateWorker } from "../terminate-worker.js";
import { startThread } from "../threads/start-thread.js";

export type CheckpointMode = "PASSIVE" | "FULL" | "RESTART" | "TRUNCATE";

/** What the checkpoint thread is given (`checkpoint-worker.ts`). */
export interface CheckpointWorkerData {
  readonly path: string;
  readonly pragmas: ConnectionPragmas;
}

/** @internal One checkpoint asked of the thread. */
export interface CheckpointRequest {
  readonly id: number;
  readonly mode: CheckpointMode;
}

/** @internal Its outcome: `done` when it completed (`busy = 0`); a failure carries SQLite's code. */
export type CheckpointReply =
  | { readonly id: number; readonly ok: true; readonly done: boolean }
  | { readonly id: number; readonly ok: false; readonly code: string | undefined; readonly message: string };

/** How a checkpoint on the thread ended: `done` (completed), `busy`, or `failed` with the error. */
export type CheckpointOutcome = { kind: "done" } | { kind: "busy" } | { kind: "failed"; error: Error };

/**
 * A store's checkpoints on a worker thread with its own connection to the file (see
 * checkpoint-worker.ts): the write connection's own automatic checkpoint is off, and the
 * checkpoints the write path asks for run there, one at a time, in order. The thread starts on
 * the first request; it keeps the process alive only while a request is pending. `close()` ends
 * it (pending requests resolve `busy`: nothing was checkpointed for them).
 */
export class CheckpointThread {
  readonly #data: CheckpointWorkerData;
  #worker: Worker | undefined;
  #ended: Promise<void> | undefined;
  readonly #pending = new Map<number, { mode: CheckpointMode; settle: (o: CheckpointOutcome) => void }>();
  #nextId = 1;
  #closed = false;

  constructor(path: string, pragmas: ConnectionPragmas) {
    this.#data = { path, pragmas: { ...pragmas, readOnly: false, image: undefined } };
  }

  /** Requests sent and not answered yet. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Whether a pending request holds other writers off while it waits for readers (RESTART, TRUNCATE). */
  get blocksWriters(): boolean {
    for (const p of this.#pending.values()) if (p.mode === "RESTART" || p.mode === "TRUNCATE") return true;
    return false;
  }

  /** The worker, once it was started (tests). */
  get worker(): Worker | undefined {
    return this.#worker;
  }

  /** Runs `PRAGMA wal_checkpoint(mode)` on the thread, after the requests before it; never rejects. */
  run(mode: CheckpointMode): Promise<CheckpointOutcome> {
    if (this.#closed) return Promise.resolve({ kind: "busy" });
    const worker = this.#start();
    const id = this.#nextId++;
    return new Promise<CheckpointOutcome>((settle) => {
      this.#pending.set(id, { mode, settle });
      worker.ref();
      worker.postMessage({ id, mode } satisfies CheckpointRequest);
    });
  }

  /** Ends the thread after the checkpoint it is running, if any; idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    if (worker === undefined) return;
    // Terminating takes effect once a running checkpoint returns to JavaScript (SQLite is not
    // interrupted mid-call); its connection closes with the thread.
    await terminateWorker(worker);
    await this.#ended;
  }

  #start(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = startThread("checkpoint-worker", this.#data);
    worker.unref();
    worker.on("message", (m: CheckpointReply) => this.#reply(m));
    this.#ended = new Promise<void>((resolve) => {
      worker.on("error", () => {});
      worker.on("exit", () => {
        // A thread that died answers nothing more: its requests checkpointed nothing.
        this.#worker = undefined;
        for (const p of this.#pending.values()) p.settle({ kind: "busy" });
        this.#pending.clear();
        resolve();
      });
    });
    this.#worker = worker;
    return worker;
  }

  #reply(m: CheckpointReply): void {
    const p = this.#pending.get(m.id);
    if (p === undefined) return;
    this.#pending.delete(m.id);
    if (this.#pending.size === 0) this.#worker?.unref();
    if (m.ok) p.settle({ kind: m.done ? "done" : "busy" });
    else p.settle({ kind: "failed", error: Object.assign(new Error(m.message), { code: m.code }) });
  }
}
