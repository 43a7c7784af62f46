import type { SearchHit, SearchMessagesOptions } from "@hermes/core";
import { StoreClosedError, throwIfAborted } from "@hermes/core";
import { ftsMatchBound } from "@hermes/search";
import { abortable } from "../abortable-iterable.js";
import type { ReadOnlyStoreState } from "../open-read-only-store.js";
import * as search from "../operations/search.js";
import type { ReadPool } from "../read-pool/read-pool.js";
import { isCloneError, searchInThread } from "../read-pool/read-routing.js";
import { mapSqliteError } from "../sqlite-errors.js";
import type { StoreContext } from "../store-context.js";
import { InlineReads } from "./inline-reads.js";

/**
 * Rows a search's words may occur in, in all, for it to run on the caller's thread with a warm
 * pool: ranking reads each (about 0.6 µs a row here), and 20 hits with their context cost about
 * 0.4 ms, so such a search takes under a millisecond, less than a worker's round trip.
 */
export const CHEAP_SEARCH_ROWS = 256;
/** Most hits (limit + offset) a search may ask for to count as cheap. */
export const CHEAP_SEARCH_PAGE = 50;

/** What the router needs of its store. */
export interface ReadRouterParts {
  readonly ctx: StoreContext;
  /** Records a damaged file seen by a read, so that the store writes nothing more (`WriteRouter.noteError`). */
  noteError(error: unknown): void;
  readonly readOnly: ReadOnlyStoreState | undefined;
  readonly pool: ReadPool | undefined;
  /** Whether the store was closed (every read then rejects with `STORE_CLOSED`). */
  closed(): boolean;
}

/**
 * Where a read of the store runs: in a read-pool worker when one is ready, else the operation
 * function on this thread (which counts toward starting the first worker); reads cheaper than a
 * worker's round trip stay here (`inline-reads.ts`). Also the checks
 * every read shares: the store is open, the `signal` has not aborted, a read-only snapshot is
 * brought up to date, and a damaged file seen by a read stops later writes.
 */
export class ReadRouter {
  readonly #p: ReadRouterParts;
  readonly #inline = new InlineReads();
  /** A search that was not cheap ran here for want of a worker (the next one waits for a worker). */
  #searchedHere = false;

  constructor(parts: ReadRouterParts) {
    this.#p = parts;
  }

  /** The store's context, or `STORE_CLOSED`. */
  use(): StoreContext {
    if (this.#p.closed()) throw new StoreClosedError();
    return this.#p.ctx;
  }

  /** The context for a read outside {@link run}: a read-only snapshot is brought up to date first. */
  fresh(): StoreContext {
    const ctx = this.use();
    try {
      this.#p.readOnly?.file.refresh();
    } catch (error) {
      throw mapSqliteError(error, ctx.path);
    }
    return ctx;
  }

  /** The pool when a worker is ready to take a read now. */
  #ready(): ReadPool | undefined {
    return this.#p.pool?.available() ? this.#p.pool : undefined;
  }

  /** `method(...args)` in a worker, or `undefined` when the read must run here (no worker ready yet). */
  async #viaPool<T>(
    method: string,
    args: unknown[],
    signal?: AbortSignal,
  ): Promise<{ value: T } | undefined> {
    const pool = this.#ready();
    if (pool === undefined) return undefined;
    try {
      return { value: await pool.call<T>(method, args, signal) };
    } catch (error) {
      // Arguments that cannot cross threads: in-thread, the same call says what is wrong with them.
      if (isCloneError(error)) return undefined;
      this.#p.noteError(error);
      throw error;
    }
  }

  /** `method(...args)` in a worker, started for it if none is (`undefined`: the pool cannot start one). */
  async #viaStartingPool<T>(
    pool: ReadPool,
    method: string,
    args: unknown[],
    signal?: AbortSignal,
  ): Promise<{ value: T } | undefined> {
    try {
      return { value: await pool.call<T>(method, args, signal) };
    } catch (error) {
      // A worker that could not open the file, or arguments that cannot cross: answered here.
      if (isCloneError(error) || pool.failed) return undefined;
      this.#p.noteError(error);
      throw error;
    }
  }

  /**
   * Whether a search costs less here than a worker's round trip (0.1–0.8 ms): a ranked
   * `messages_fts` search whose words occur in at most {@link CHEAP_SEARCH_ROWS} rows in all
   * (`ftsMatchBound`, a few short index walks), for a page of at most {@link CHEAP_SEARCH_PAGE}
   * hits. Anything this cannot bound (CJK, filters it cannot read, an error) is not cheap.
   */
  #isCheapSearch(query: string, o: SearchMessagesOptions | undefined): boolean {
    const page = (o?.limit ?? 20) + (o?.offset ?? 0);
    if (typeof page !== "number" || !(page <= CHEAP_SEARCH_PAGE)) return false;
    try {
      const bound = ftsMatchBound(this.#p.ctx.conn, query, CHEAP_SEARCH_ROWS);
      return bound !== null && bound <= CHEAP_SEARCH_ROWS;
    } catch {
      return false; // the search itself reports what is wrong
    }
  }

  /** Runs a read: in a worker as `method(...args)` when the pool has one ready, else `fn` here. */
  async run<T>(
    fn: (ctx: StoreContext) => T,
    method?: string,
    args?: unknown[],
    signal?: AbortSignal,
  ): Promise<T> {
    const ctx = this.use();
    throwIfAborted(signal);
    const pool = this.#p.pool;
    const inline = method !== undefined && pool !== undefined && this.#inline.wants(method, args ?? []);
    if (method !== undefined && pool !== undefined && !inline) {
      const pooled = await this.#viaPool<T>(method, args ?? [], signal);
      if (pooled !== undefined) return pooled.value;
    }
    const started = pool === undefined ? 0 : performance.now();
    try {
      this.#p.readOnly?.file.refresh();
      const value = fn(ctx);
      throwIfAborted(signal); // in-thread, a query cannot be interrupted: its answer is dropped
      return value;
    } catch (error) {
      // A damaged file seen by a read stops every later write and checkpoint of this store.
      this.#p.noteError(error);
      throw mapSqliteError(error, ctx.path);
    } finally {
      const ms = performance.now() - started;
      pool?.noteInThread(ms);
      if (inline) this.#inline.note(method, ms);
    }
  }

  /** `exportSessionMarkdown`: in a worker when one is ready (no signal), else `fn` here. */
  async runAsync<T>(method: string, args: unknown[], fn: (ctx: StoreContext) => Promise<T>): Promise<T> {
    if (this.#p.pool !== undefined) {
      this.use();
      const pooled = await this.#viaPool<T>(method, args);
      if (pooled !== undefined) return pooled.value;
    }
    return fn(this.fresh());
  }

  /**
   * A search, where it costs the caller least (with a pool; without one, always here):
   * - here, at once, when it is cheap ({@link isCheapSearch}): a worker's round trip would cost
   *   more than the search;
   * - else in a worker when `inWorker()` says it may (the store's rule): one that is ready, or
   *   one starting, which the search waits for, as a scan of short CJK terms always does (it
   *   takes far longer than a thread's start);
   * - else here, for the first such search of a store with no worker yet (a command that
   *   searches once never starts a thread); any later one starts a worker and waits for it.
   */
  async search(
    query: string,
    rest: SearchMessagesOptions | undefined,
    signal: AbortSignal | undefined,
    inWorker: () => Promise<boolean>,
  ): Promise<SearchHit[]> {
    this.use();
    throwIfAborted(signal);
    const pool = this.#p.pool;
    if (pool !== undefined && !this.#isCheapSearch(query, rest) && (await inWorker())) {
      const args = [query, rest];
      let pooled: { value: SearchHit[] } | undefined;
      if (pool.available()) pooled = await this.#viaPool<SearchHit[]>("searchMessages", args, signal);
      else if (!pool.failed && (pool.starting() || this.#searchedHere || searchInThread(query)))
        pooled = await this.#viaStartingPool<SearchHit[]>(pool, "searchMessages", args, signal);
      // else: the one search that is not cheap run here before a worker exists (a CLI
      // command's); any later one, or one arriving with it, starts a worker and waits for it.
      else this.#searchedHere = true;
      if (pooled !== undefined) return pooled.value;
    }
    const started = performance.now();
    try {
      const hits = await search.searchMessages(this.fresh(), query, rest);
      pool?.noteInThread(performance.now() - started);
      throwIfAborted(signal);
      return hits;
    } catch (error) {
      this.#p.noteError(error);
      throw error;
    }
  }

  /**
   * A stream: a worker's `method(...args)` when one is ready, else `inThread()`, whose time
   * counts toward starting a worker once it ends (so a worker never starts for the stream it
   * cannot serve); checked against `signal` before each item and guarded against `close()`.
   */
  stream<T>(
    method: string,
    args: unknown[],
    signal: AbortSignal | undefined,
    inThread: () => AsyncIterable<T>,
  ): AsyncIterable<T> {
    const source = this.#ready()?.stream<T>(method, args, signal) ?? this.#timed(inThread());
    return this.guard(abortable(source, signal));
  }

  /**
   * The source of a stream consumed inside one operation (`exportJsonl`'s events): chosen now,
   * opened when the operation asks for it.
   */
  streamSource<T, A>(
    method: string,
    args: unknown[],
    signal: AbortSignal | undefined,
    inThread: (arg: A) => AsyncIterable<T>,
  ): (arg: A) => AsyncIterable<T> {
    const pool = this.#ready();
    return (arg) => abortable(pool?.stream<T>(method, args, signal) ?? this.#timed(inThread(arg)), signal);
  }

  /** An in-thread stream whose time producing items is noted to the pool when it ends. */
  async *#timed<T>(source: AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
    const pool = this.#p.pool;
    if (pool === undefined) return yield* source;
    const it = source[Symbol.asyncIterator]();
    let ms = 0;
    try {
      for (;;) {
        const started = performance.now();
        const step = await it.next();
        ms += performance.now() - started;
        if (step.done === true) return;
        yield step.value;
      }
    } finally {
      await it.return?.();
      pool.noteInThread(ms);
    }
  }

  /** @internal Methods the cheap-read guard sent to the pool (tests). */
  get demoted(): ReadonlySet<string> {
    return this.#inline.demoted;
  }

  /** Turns a failure after `close()` into `STORE_CLOSED` for long-lived iterables. */
  async *guard<T>(source: AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
    try {
      for await (const item of source) {
        yield item;
        if (this.#p.closed()) throw new StoreClosedError();
      }
    } catch (error) {
      if (this.#p.closed()) throw error instanceof StoreClosedError ? error : new StoreClosedError();
      this.#p.noteError(error);
      throw error;
    }
  }
}
