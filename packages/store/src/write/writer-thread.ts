import type { Worker } from "node:worker_threads";
import { AbortedError, BackendError, StoreClosedError } from "@hermes/core";
import { reviveError, serializeError } from "../read-pool/worker-errors.js";
import { terminateWorker } from "../terminate-worker.js";
import { startThread } from "../threads/start-thread.js";
import { CallerClock } from "./caller-clock.js";
import { createWriteStats, type WriteStats } from "./write-stats.js";
import type { CjkBuilderState, WriterCall, WriterReply, WriterWorkerData } from "./writer-protocol.js";

/** Longest wait, in ms, for the thread to close its store and end before it is terminated. */
const CLOSE_GRACE_MS = 30_000;

/** A call posted to the thread and not answered yet. */
interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  onProgress: ((progress: unknown) => void) | undefined;
  release: () => void;
}

/** What a call may carry besides its arguments (values that stay on the caller's thread). */
export interface WriterCallOptions {
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: ((progress: never) => void) | undefined;
}

/**
 * One writer thread (`writer-worker.ts`), from its start to its end: the calls of the caller's
 * store posted to it by name, those made in one tick in one message (so that they group as on
 * the caller's thread), and their answers with the writer's counters. It keeps the process alive
 * only while a call is pending. A thread that ends on its own rejects its pending calls with
 * `BACKEND_ERROR` (whether each was committed is unknown) and answers nothing more; the store
 * starts another one for its next write (see `WriteRouter`).
 */
export class WriterThread {
  readonly #data: WriterWorkerData;
  readonly #clock: CallerClock | undefined;
  readonly #callerClock: (() => number) | undefined;
  #worker: Worker | undefined;
  #ended: Promise<void> = Promise.resolve();
  readonly #pending = new Map<number, Pending>();
  #batch: WriterCall[] = [];
  #id = 0;
  #stats: WriteStats = createWriteStats();
  #cjk: CjkBuilderState = { active: false, lastError: null };
  #alive = false;
  #closing = false;
  #idle: (() => void)[] = [];

  /** `clock`: the caller's own clock option, read by the thread for every timestamp (see `caller-clock.ts`). */
  constructor(data: Omit<WriterWorkerData, "clock" | "corruption">, clock?: () => number) {
    this.#callerClock = clock;
    this.#clock = clock === undefined ? undefined : new CallerClock(clock);
    this.#data = this.#clock === undefined ? data : { ...data, clock: this.#clock.buffer };
  }

  /** A thread not started yet, with the same settings (the next writer after this one ended). */
  successor(): WriterThread {
    const { clock: _, corruption: __, ...data } = this.#data;
    return new WriterThread(data, this.#callerClock);
  }

  /** Whether the thread runs and takes calls (started, not ended, not closing). */
  get alive(): boolean {
    return this.#alive && !this.#closing;
  }

  /** The writer's write counters, as of its last answer. */
  get stats(): WriteStats {
    return this.#stats;
  }

  /** Whether the writer's short-CJK builder runs, as the writer last said. */
  get cjk(): CjkBuilderState {
    return this.#cjk;
  }

  /** @internal The worker (tests end it). */
  get worker(): Worker | undefined {
    return this.#worker;
  }

  /** Starts the thread; resolves once its store is open, or rejects with why it could not open. */
  start(corruption?: unknown): Promise<void> {
    const data =
      corruption === undefined ? this.#data : { ...this.#data, corruption: serializeError(corruption) };
    const worker = startThread("writer-worker", data);
    this.#worker = worker;
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      worker.on("message", (m: WriterReply) => {
        if (m.type === "ready") {
          ready = true;
          this.#alive = true;
          this.#stats = m.stats;
          this.#cjk = m.cjk;
          worker.unref();
          resolve();
        } else if (m.type === "failed") reject(reviveError(m.error, "the writer thread"));
        else this.#reply(m);
      });
      worker.on("error", (error) => {
        if (!ready) reject(error);
      });
      this.#ended = new Promise<void>((ended) => {
        worker.on("exit", (code) => {
          this.#alive = false;
          this.#clock?.end();
          if (!ready)
            reject(new BackendError(`The writer thread ended (exit code ${code}) before it opened the file`));
          this.#fail(
            this.#closing
              ? new StoreClosedError()
              : new BackendError(
                  `The writer thread ended (exit code ${code}) before answering; the write may or may not ` +
                    "have been committed. The store starts a new writer thread for its next write.",
                ),
          );
          ended();
        });
      });
    });
  }

  /** Posts the write `method(...args)`; resolves with the writer's answer after its COMMIT. */
  call(method: string, args: unknown[], o: WriterCallOptions = {}): Promise<unknown> {
    if (!this.alive) return Promise.reject(new BackendError("The writer thread is not running"));
    const { signal, onProgress } = o;
    if (signal?.aborted) return Promise.reject(new AbortedError());
    const id = ++this.#id;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        // The writer finishes the call (SQLite cannot be interrupted); its answer is dropped.
        this.#settle(id)?.reject(new AbortedError());
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#pending.set(id, {
        resolve,
        reject,
        onProgress: onProgress as ((progress: unknown) => void) | undefined,
        release: () => signal?.removeEventListener("abort", onAbort),
      });
      this.#worker?.ref();
      this.#batch.push({ id, method, args, ...(onProgress === undefined ? {} : { progress: true }) });
      if (this.#batch.length === 1) queueMicrotask(() => this.#flush());
    });
  }

  /**
   * Has the writer go on with the short-CJK build this thread's side stopped at the hand-over.
   * The build counts as running from now on (the writer says otherwise when it has nothing left
   * to do): a status read before the writer's first word would report no build while one is
   * about to go on.
   */
  continueCjkBuild(): void {
    if (!this.alive) return;
    this.#cjk = { active: true, lastError: this.#cjk.lastError };
    this.#worker?.postMessage({ type: "buildCjk" });
  }

  /** Tells the writer that a read found the file damaged: it writes nothing more. */
  noteCorruption(error: unknown): void {
    if (this.alive) this.#worker?.postMessage({ type: "corrupt", error: serializeError(error) });
  }

  /** Resolves once no call is pending. */
  idle(): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Closes the writer's store (its queued writes first, then its final checkpoint) and ends the thread. */
  async close(): Promise<void> {
    const worker = this.#worker;
    if (worker === undefined || this.#closing) return this.#ended;
    this.#closing = true;
    if (this.#alive) {
      worker.ref();
      worker.postMessage({ type: "close" });
      const timer = setTimeout(() => void terminateWorker(worker), CLOSE_GRACE_MS);
      try {
        await this.#ended;
      } finally {
        clearTimeout(timer);
      }
    } else await terminateWorker(worker);
    await this.#ended;
  }

  /** Posts the calls of this tick in one message; calls whose arguments cannot be copied fail alone. */
  #flush(): void {
    const calls = this.#batch;
    this.#batch = [];
    if (calls.length === 0) return; // failed meanwhile: the thread ended
    const worker = this.#worker;
    if (worker === undefined || !this.#alive) {
      for (const call of calls) this.#settle(call.id)?.reject(new BackendError("The writer thread ended"));
      return;
    }
    try {
      worker.postMessage({ type: "calls", calls });
    } catch {
      for (const call of calls) {
        try {
          worker.postMessage({ type: "calls", calls: [call] });
        } catch (error) {
          this.#settle(call.id)?.reject(error); // a DataCloneError: the router says what is wrong
        }
      }
    }
  }

  #reply(m: WriterReply): void {
    switch (m.type) {
      case "replies":
        this.#stats = m.stats;
        for (const a of m.answers) {
          const p = this.#settle(a.id);
          if (a.ok) p?.resolve(a.value);
          else p?.reject(reviveError(a.error, "the writer thread"));
        }
        return;
      case "progress":
        this.#pending.get(m.id)?.onProgress?.(m.progress);
        return;
      case "cjk":
        this.#cjk = m.cjk;
        return;
      case "clock":
        this.#clock?.answer();
        return;
      case "closed":
        this.#stats = m.stats;
        return;
    }
  }

  /** Takes a pending call out (`undefined` when it was settled already). */
  #settle(id: number): Pending | undefined {
    const p = this.#pending.get(id);
    if (p === undefined) return undefined;
    this.#pending.delete(id);
    p.release();
    if (this.#pending.size === 0) {
      if (!this.#closing) this.#worker?.unref();
      for (const resolve of this.#idle.splice(0)) resolve();
    }
    return p;
  }

  #fail(error: Error): void {
    for (const id of [...this.#pending.keys()]) this.#settle(id)?.reject(error);
    for (const call of this.#batch.splice(0)) this.#settle(call.id)?.reject(error);
  }
}
