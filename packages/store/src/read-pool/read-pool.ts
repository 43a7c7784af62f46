import { Worker } from "node:worker_threads";
import * as core from "@hermes/core";
import { HermesStoreError, StoreClosedError } from "@hermes/core";

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Worker threads, each with its own read-only connection to one file, running the store's read
 * methods by name (the same operation functions as in-thread: no second implementation).
 * A worker that dies rejects only its in-flight calls (`BACKEND_ERROR`) and is replaced.
 */
export class ReadPool {
  readonly #path: string;
  readonly #workers: Array<{ worker: Worker; pending: Map<number, Pending> }> = [];
  #next = 0;
  #id = 0;
  #closed = false;

  constructor(path: string, readers: number) {
    this.#path = path;
    for (let i = 0; i < readers; i++) this.#workers.push(this.#spawn());
  }

  #spawn(): { worker: Worker; pending: Map<number, Pending> } {
    const worker = new Worker(new URL("./read-worker.js", import.meta.url), {
      workerData: { path: this.#path },
    });
    const slot = { worker, pending: new Map<number, Pending>() };
    worker.on(
      "message",
      (m: { id: number; ok: boolean; value?: unknown; error?: Record<string, unknown> }) => {
        const p = slot.pending.get(m.id);
        if (p === undefined) return;
        slot.pending.delete(m.id);
        if (m.ok) p.resolve(m.value);
        else p.reject(reviveError(m.error ?? {}));
      },
    );
    const die = (reason: string) => {
      for (const p of slot.pending.values()) p.reject(new core.BackendError(`read worker ended: ${reason}`));
      slot.pending.clear();
      const at = this.#workers.indexOf(slot);
      if (at >= 0 && !this.#closed) this.#workers[at] = this.#spawn();
    };
    worker.on("error", (e) => die(e.message));
    worker.on("exit", (code) => die(`exit code ${code}`));
    return slot;
  }

  /** How many workers the pool keeps. */
  get size(): number {
    return this.#workers.length;
  }

  /** @internal The worker that would take the next call (tests kill it). */
  workerAt(i: number): Worker | undefined {
    return this.#workers[i]?.worker;
  }

  call<T>(method: string, args: unknown[]): Promise<T> {
    if (this.#closed) return Promise.reject(new StoreClosedError());
    const slot = this.#workers[this.#next++ % this.#workers.length];
    if (slot === undefined) return Promise.reject(new StoreClosedError());
    const id = ++this.#id;
    return new Promise<T>((resolve, reject) => {
      slot.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      slot.worker.postMessage({ id, method, args });
    });
  }

  /** Ends every worker; in-flight calls reject with `STORE_CLOSED`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(
      this.#workers.map(async (slot) => {
        for (const p of slot.pending.values()) p.reject(new StoreClosedError());
        slot.pending.clear();
        await slot.worker.terminate();
      }),
    );
    this.#workers.length = 0;
  }
}

/** Rebuilds a worker's error as core's class of the same name (so `instanceof` and `code` hold). */
function reviveError(data: Record<string, unknown>): Error {
  const cls = (core as Record<string, unknown>)[String(data.name)];
  const proto =
    typeof cls === "function" && cls.prototype instanceof HermesStoreError ? cls.prototype : Error.prototype;
  const error = Object.create(proto) as Error;
  Object.assign(error, data);
  return error;
}
