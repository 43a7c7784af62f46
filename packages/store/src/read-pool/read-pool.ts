import type { Worker } from "node:worker_threads";
import { AbortedError, BackendError, StoreClosedError } from "@hermes/core";
import { terminateWorker } from "../terminate-worker.js";
import { startThread } from "../threads/start-thread.js";
import type { WorkerReply, WorkerRequest } from "./read-methods.js";
import { reviveError } from "./worker-errors.js";

/** In-thread read time after which the first worker starts (see `ReadPool.noteInThread`). */
export const WARM_AFTER_MS = 20;

/** A request waiting for, or running on, a worker. */
interface Job {
  req: WorkerRequest;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  slot: Slot | undefined;
}

/** One worker: it runs one job at a time; `bound` are the jobs of streams that live in it. */
interface Slot {
  worker: Worker;
  ready: boolean;
  running: Job | undefined;
  bound: Job[];
  ended: boolean;
  /** Settles once the worker is ready or gone. */
  started: Promise<void>;
}

/** A stream's home: the worker holding its iterator, and its id there. */
interface StreamHandle {
  slot: Slot;
  id: number;
}

/**
 * Worker threads, each with its own read-only connection to one file, running the store's read
 * methods (read-methods.ts) with the same operation functions as in-thread. Workers start on
 * demand (the first once in-thread reads took {@link WARM_AFTER_MS}), up to `readers`; each runs one job at a time, the others wait in arrival order. A
 * worker that dies rejects only its own jobs (`BACKEND_ERROR`), and a later job starts a new
 * one; an aborted job rejects with `ABORTED` and, when it was running, its worker is ended.
 * Idle workers do not keep the process alive.
 */
export class ReadPool {
  readonly #path: string;
  readonly #tempFiles: boolean;
  readonly #max: number;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  #id = 0;
  #closed = false;
  #failed = false;
  #served = 0;
  #inThreadMs = 0;

  /** `tempFiles`: the workers' sorts may use temporary files (a writable store's pool; see `ReadOnlyFileOptions`). */
  constructor(path: string, readers: number, o: { tempFiles?: boolean } = {}) {
    this.#path = path;
    this.#tempFiles = o.tempFiles === true;
    this.#max = readers;
  }

  /** How many workers the pool may run. */
  get size(): number {
    return this.#max;
  }

  /** Workers started and ready to read. */
  get readyWorkers(): number {
    return this.#slots.filter((s) => s.ready && !s.ended).length;
  }

  /** Whether a worker could not open the file (the store then reads in-thread). */
  get failed(): boolean {
    return this.#failed;
  }

  /** @internal The i-th worker started (tests end it). */
  workerAt(i: number): Worker | undefined {
    return this.#slots[i]?.worker;
  }

  /** Whether a worker is ready to take a call now (`false` once closed, or when a worker could not open the file). */
  available(): boolean {
    if (this.#closed || this.#failed) return false;
    return this.#slots.some((s) => s.ready);
  }

  /** Whether a worker is starting or running (a call waits for one that starts). */
  starting(): boolean {
    if (this.#closed || this.#failed) return false;
    return this.#slots.some((s) => !s.ended);
  }

  /**
   * Time a read just spent on the caller's thread because no worker was ready. Once such reads
   * add up to {@link WARM_AFTER_MS}, a worker starts: a short-lived process (a CLI command)
   * never pays for a thread, a process that reads a lot gets its readers off its thread.
   */
  noteInThread(ms: number): void {
    this.#inThreadMs += ms;
    if (this.#inThreadMs >= WARM_AFTER_MS && this.#slots.length === 0) void this.warmUp();
  }

  /**
   * Starts workers until `count` run (at most the pool's size) and resolves once they are
   * ready (or gone): for a server that wants its readers warm before the first request.
   */
  async warmUp(count = 1): Promise<void> {
    if (this.#closed || this.#failed) return;
    while (this.#slots.length < Math.min(count, this.#max)) this.#spawn();
    await Promise.all(
      this.#slots.slice(0, count).map(async (slot) => {
        slot.worker.ref(); // awaited: the process waits for it
        await slot.started;
        if (slot.running === undefined && !slot.ended) slot.worker.unref();
      }),
    );
  }

  /** @internal Replies received from workers (tests count a stream's batches). */
  get served(): number {
    return this.#served;
  }

  /** Runs a whitelisted read method in a worker. */
  call<T>(method: string, args: unknown[], signal?: AbortSignal): Promise<T> {
    return this.#submit({ type: "call", id: ++this.#id, method, args }, signal, undefined) as Promise<T>;
  }

  /**
   * A whitelisted stream of a worker, batch by batch: at most one batch is read ahead while the
   * consumer works through the current one, so memory holds two batches whatever the stream's size.
   */
  async *stream<T>(
    method: string,
    args: unknown[],
    signal?: AbortSignal,
  ): AsyncGenerator<T, void, undefined> {
    const handle = (await this.#submit(
      { type: "open", id: ++this.#id, method, args },
      signal,
      undefined,
    )) as StreamHandle;
    const next = () =>
      this.#submit({ type: "next", id: ++this.#id, stream: handle.id }, signal, handle.slot) as Promise<{
        items: T[];
        done: boolean;
      }>;
    let done = false;
    let ahead = next();
    try {
      for (;;) {
        const batch = await ahead;
        done = batch.done;
        if (!done) {
          ahead = next();
          ahead.catch(() => undefined); // awaited on the next turn; not unhandled meanwhile
        }
        for (const item of batch.items) {
          if (signal?.aborted) throw new AbortedError();
          yield item;
        }
        if (done) return;
      }
    } finally {
      if (!done && !handle.slot.ended) {
        this.#submit({ type: "end", id: ++this.#id, stream: handle.id }, undefined, handle.slot).catch(
          () => undefined,
        );
      }
    }
  }

  #submit(req: WorkerRequest, signal: AbortSignal | undefined, bound: Slot | undefined): Promise<unknown> {
    if (this.#closed) return Promise.reject(new StoreClosedError());
    if (signal?.aborted) return Promise.reject(new AbortedError());
    if (bound?.ended)
      return Promise.reject(new BackendError("read worker ended: the stream's worker is gone"));
    return new Promise((resolve, reject) => {
      const job: Job = { req, resolve, reject, signal, onAbort: undefined, slot: undefined };
      if (signal !== undefined) {
        job.onAbort = () => this.#abort(job);
        signal.addEventListener("abort", job.onAbort, { once: true });
      }
      if (bound !== undefined) {
        bound.bound.push(job);
        this.#run(bound);
      } else {
        this.#queue.push(job);
        this.#dispatch();
      }
    });
  }

  #settle(job: Job, error: unknown, value?: unknown): void {
    if (job.onAbort !== undefined) job.signal?.removeEventListener("abort", job.onAbort);
    if (error === undefined) job.resolve(value);
    else job.reject(error);
  }

  #abort(job: Job): void {
    const slot = job.slot;
    if (slot !== undefined && slot.running === job) {
      // SQLite cannot be interrupted from this thread: the worker ends, its other jobs fail.
      slot.running = undefined;
      this.#settle(job, new AbortedError());
      this.#end(slot, "a call it was running was aborted");
      void slot.worker.terminate();
      this.#dispatch();
      return;
    }
    const list = slot === undefined ? this.#queue : slot.bound;
    const at = list.indexOf(job);
    if (at >= 0) list.splice(at, 1);
    this.#settle(job, new AbortedError());
  }

  /** Gives queued jobs to idle workers, starting workers while there is work and room. */
  #dispatch(): void {
    while (this.#queue.length > 0) {
      const idle = this.#slots.find((s) => !s.ended && s.running === undefined && s.bound.length === 0);
      if (idle !== undefined) {
        this.#run(idle);
        continue;
      }
      if (this.#slots.length >= this.#max) return;
      this.#run(this.#spawn());
    }
  }

  /** Starts the slot's next job: its streams' jobs first, then the queue's. */
  #run(slot: Slot): void {
    if (slot.ended || slot.running !== undefined) return;
    const job = slot.bound.shift() ?? this.#queue.shift();
    if (job === undefined) {
      slot.worker.unref();
      return;
    }
    job.slot = slot;
    slot.running = job;
    slot.worker.ref();
    try {
      slot.worker.postMessage(job.req);
    } catch (error) {
      // Arguments that cannot cross threads (a function, a symbol): the caller's mistake.
      slot.running = undefined;
      this.#settle(job, error);
      this.#run(slot);
    }
  }

  #spawn(): Slot {
    const worker = startThread("read-worker", { path: this.#path, tempFiles: this.#tempFiles });
    let started!: () => void;
    const slot: Slot = {
      worker,
      ready: false,
      running: undefined,
      bound: [],
      ended: false,
      started: new Promise<void>((resolve) => {
        started = resolve;
      }),
    };
    worker.once("message", () => started());
    worker.once("exit", () => started());
    worker.unref(); // until it has a job: an idle pool never keeps the process alive
    this.#slots.push(slot);
    worker.on("message", (m: WorkerReply) => this.#reply(slot, m));
    worker.on("error", (e) => this.#end(slot, e.message));
    worker.on("exit", (code) => this.#end(slot, `exit code ${code}`));
    return slot;
  }

  #reply(slot: Slot, m: WorkerReply): void {
    if (m.type === "ready") {
      slot.ready = true;
      if (slot.running === undefined) slot.worker.unref();
      return;
    }
    if (m.type === "failed") {
      this.#failed = true;
      this.#end(slot, reviveError(m.error).message);
      return;
    }
    this.#served++;
    const job = slot.running;
    if (job === undefined || job.req.id !== m.id) return;
    slot.running = undefined;
    if (!m.ok) this.#settle(job, reviveError(m.error));
    else this.#settle(job, undefined, job.req.type === "open" ? { slot, id: job.req.id } : m.value);
    this.#run(slot);
    this.#dispatch();
  }

  /** A worker is gone: its jobs reject, it leaves the pool (a later job starts another). */
  #end(slot: Slot, reason: string): void {
    if (slot.ended) return;
    slot.ended = true;
    const at = this.#slots.indexOf(slot);
    if (at >= 0) this.#slots.splice(at, 1);
    const jobs = [...(slot.running === undefined ? [] : [slot.running]), ...slot.bound.splice(0)];
    slot.running = undefined;
    const error = this.#closed ? new StoreClosedError() : new BackendError(`read worker ended: ${reason}`);
    for (const job of jobs) this.#settle(job, error);
    if (!this.#closed && !this.#failed) this.#dispatch();
    else if (this.#failed) for (const job of this.#queue.splice(0)) this.#settle(job, error);
  }

  /** Ends every worker; queued and running jobs reject with `STORE_CLOSED`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const job of this.#queue.splice(0)) this.#settle(job, new StoreClosedError());
    const slots = this.#slots.splice(0);
    await Promise.all(
      slots.map(async (slot) => {
        this.#end(slot, "the store closed");
        await terminateWorker(slot.worker);
      }),
    );
  }
}
