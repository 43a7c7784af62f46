import {
  type AutoPruneOptions,
  type AutoPruneResult,
  type ImportReport,
  type ImportSessionsOptions,
  type ImportSource,
  InvalidArgumentError,
  removeSessionFiles,
  runAutoPrune,
  type SearchHit,
  type SearchIndexReport,
  type SearchMessagesOptions,
} from "@hermes/core";
import * as retention from "../operations/retention.js";
import * as search from "../operations/search.js";
import * as portable from "../portable/store-methods.js";
import { isCloneError, searchInThread } from "../read-pool/read-routing.js";
import type { CjkSideIndex } from "../side-index/cjk-side-index.js";
import type { StoreContext } from "../store-context.js";
import { runWrite, type WriteArgs, type WriteMethod, type WriteResult } from "./write-operations.js";
import { closeWritePath, handOverWritePath, type WritePath } from "./write-path.js";
import { addWriteStats, createWriteStats, type WriteStats } from "./write-stats.js";
import type { WriterCallOptions, WriterThread } from "./writer-thread.js";

/** What the router needs of its store. */
export interface WriteRouterParts {
  /** The store's context on this thread (its queue runs the writes when there is no writer thread). */
  readonly ctx: StoreContext;
  /** The context for a write, or `STORE_CLOSED` / the read-only refusal (before any validation). */
  use(action: string): StoreContext;
  /** This thread's write path (writable stores without a writer thread); ended by `close()`. */
  readonly path?: WritePath | undefined;
  /** The writer thread, started and ready (`writer: "thread"`). */
  readonly thread?: WriterThread | undefined;
  /**
   * `writer: "auto"`: a writer thread, not started. It starts once this thread's queue has
   * committed {@link WRITER_AFTER_COMMITS} transactions while the store reads in its read pool
   * (`readsInWorkers`), and takes the writes over once it is ready and the writes running here
   * have settled.
   */
  readonly spawn?: (() => WriterThread) | undefined;
  /** Whether the store's read pool has a worker ready (reads run off this thread). */
  readsInWorkers(): boolean;
  readonly readOnly: boolean;
  readonly cjkIndex: CjkSideIndex;
}

/**
 * Transactions committed on the caller's thread after which `writer: "auto"` starts its writer
 * thread (once the store also reads in its pool): a command that writes a little never pays for
 * the thread (about 0.3 s of CPU to load the store's modules there).
 */
export const WRITER_AFTER_COMMITS = 8;

/**
 * Where a write of the store runs: on this thread (its write queue) or, with a writer thread,
 * posted there by name (`write-operations.ts`). Also what a thread cannot take: transcript files
 * are removed here after the writer's COMMIT, `onProgress` reports come back as messages, an
 * iterable import source is read here and its units posted one by one, and a read's finding of a
 * damaged file is passed on. A writer thread that ended is replaced by a new one at the next
 * write (its pending calls were rejected with `BACKEND_ERROR`).
 */
export class WriteRouter {
  readonly #p: WriteRouterParts;
  #thread: WriterThread | undefined;
  /** A writer thread starting in place of one that ended. */
  #restarting: Promise<WriterThread> | undefined;
  /** `writer: "auto"`: the thread not started yet, then its start and hand-over. */
  #spawn: (() => WriterThread) | undefined;
  #starting: Promise<void> | undefined;
  /** While set, writes wait: the queue here settles before the writer thread takes over. */
  #handover: Promise<void> | undefined;
  #closing = false;
  /** Operations running on this thread's write path (the take-over waits for them). */
  #inflight = 0;
  #settledWaiters: Array<() => void> = [];
  /** Counters of writer threads that ended (their successors count from zero). */
  #retired: WriteStats = createWriteStats();
  /** The first damage of the file seen, passed to every new writer thread. */
  #corruption: unknown;

  constructor(parts: WriteRouterParts) {
    this.#p = parts;
    this.#thread = parts.thread;
    this.#spawn = parts.spawn;
  }

  /** @internal The writer thread (`undefined` when writes run on this thread); tests. */
  get thread(): WriterThread | undefined {
    return this.#thread;
  }

  /** Runs the write `name`: here, or posted to the writer thread. */
  call<K extends WriteMethod>(name: K, args: WriteArgs<K>, o?: WriterCallOptions): Promise<WriteResult<K>> {
    return this.#route(this.#p.use(name), name, args, o);
  }

  #route<K extends WriteMethod>(
    ctx: StoreContext,
    name: K,
    args: WriteArgs<K>,
    o?: WriterCallOptions,
  ): Promise<WriteResult<K>> {
    // Held in call order while the writer thread takes over; then posted together.
    if (this.#handover !== undefined) return this.#handover.then(() => this.#route(ctx, name, args, o));
    const thread = this.#thread;
    if (thread === undefined) {
      const result = this.#track(runWrite(ctx, name, args));
      if (this.#spawn !== undefined) this.#maybeStart();
      return result;
    }
    const posted = thread.alive
      ? thread.call(name, args, o)
      : this.#restart().then((next) => next.call(name, args, o));
    return posted.catch((error: unknown) => {
      this.#remember(error);
      if (!isCloneError(error)) throw error;
      throw new InvalidArgumentError(
        "arguments",
        `${name}: its arguments cannot be copied to the store's writer thread (${(error as Error).message}); ` +
          "pass plain data (no functions, symbols or class instances that cannot be cloned)",
      );
    }) as Promise<WriteResult<K>>;
  }

  /** Deletes a session; then, with `sessionsDir`, removes its transcript files here. */
  async deleteSession(id: string, o?: { sessionsDir?: string }): Promise<boolean> {
    this.#p.use("deleteSession");
    const a = retention.deleteArguments(id, o);
    const deleted = await this.call("deleteSession", [a.id]);
    if (deleted && a.dir !== null) await removeSessionFiles(a.dir, [a.id]);
    return deleted;
  }

  /** Prunes ended sessions; then, with `sessionsDir`, removes their transcript files here. */
  async pruneSessions(o?: retention.PruneOptions): Promise<number> {
    this.#p.use("pruneSessions");
    const { days, source, dir } = retention.pruneArguments(o);
    const ids = await this.call("pruneSessionIds", [{ olderThanDays: days, source: source ?? undefined }]);
    // Files go after COMMIT: a filesystem problem must never undo or block the database change.
    if (dir !== null) await removeSessionFiles(dir, ids);
    return ids.length;
  }

  /** Rebuilds the search indexes; with a writer thread, its progress reports come back as messages. */
  async rebuildSearchIndex(o?: search.RebuildOptions): Promise<void> {
    this.#p.use("rebuildSearchIndex");
    const opts = search.rebuildArguments(o);
    if (this.#thread === undefined) return this.call("rebuildSearchIndex", [opts]);
    return this.call("rebuildSearchIndex", [{}], { onProgress: opts.onProgress });
  }

  /** Imports sessions: a file in the writer; an iterable read here, its units written there. */
  async importSessions(source: ImportSource, o?: ImportSessionsOptions): Promise<ImportReport> {
    const ctx = this.#p.use("importSessions");
    if (this.#thread === undefined || typeof source === "string")
      return this.call("importSessions", [source, o]);
    return portable.importSessions(ctx, source, o, (batch, opts) => this.call("importBatch", [batch, opts]));
  }

  /** Startup housekeeping (`runAutoPrune`), its writes routed as any other. */
  maybeAutoPruneAndVacuum(o?: AutoPruneOptions): Promise<AutoPruneResult> {
    const ctx = this.#p.use("maybeAutoPruneAndVacuum");
    return runAutoPrune(
      {
        getMeta: async (key) => retention.getMeta(ctx, key),
        setMeta: (key, value) => this.call("setMeta", [key, value]),
        prune: (options) => this.pruneSessions(options),
        vacuum: () => this.call("vacuum", []),
        now: () => ctx.now(),
      },
      o,
    );
  }

  /** Checks the search indexes: in the writer thread when there is one (FTS5's check is a write command). */
  async verifySearchIndex(fresh: () => StoreContext): Promise<SearchIndexReport> {
    await this.#handover;
    if (this.#thread === undefined) return this.#track(search.verifySearchIndex(fresh()));
    return this.call("verifySearchIndex", []);
  }

  /**
   * A search, where its short CJK terms (if any) can have their index brought up to date (a
   * write): in the writer thread when there is one (`null` back: the index is being built, and
   * the terms are scanned by `read`, as any read); else by `read` (a read worker or this thread),
   * after a small backlog of the index was caught up here. `read(inWorker)`: the read path, told
   * whether the search may run in a read worker.
   */
  async search(
    query: string,
    rest: SearchMessagesOptions | undefined,
    signal: AbortSignal | undefined,
    read: (inWorker: () => Promise<boolean>) => Promise<SearchHit[]>,
  ): Promise<SearchHit[]> {
    const { readOnly, cjkIndex, ctx } = this.#p;
    if (readOnly || !searchInThread(query)) return read(async () => true);
    await this.#handover;
    if (this.#thread === undefined) {
      return this.#track(read(() => cjkIndex.scanInWorker(query, (label, fn) => ctx.writes.run(label, fn))));
    }
    const hits = await this.call("searchWithCjkIndex", [query, rest], { signal });
    return hits ?? read(async () => true);
  }

  /**
   * Records `error` if it shows the database file damaged (reads report theirs here), so that no
   * later write or checkpoint touches the file: this thread's queue, and the writer thread.
   */
  noteError(error: unknown): void {
    if (this.#remember(error)) this.#thread?.noteCorruption(error);
  }

  /**
   * The write counters: this thread's queue's, plus the writer threads' (as of their last
   * answers) once there is one.
   */
  stats(): WriteStats {
    const here = this.#p.ctx.writes.stats;
    const thread = this.#thread;
    return thread === undefined ? here : addWriteStats(here, addWriteStats(this.#retired, thread.stats));
  }

  /** Resolves once every write made so far has settled. */
  async whenIdle(): Promise<void> {
    await this.#handover;
    if (this.#thread === undefined) return this.#p.ctx.writes.whenIdle();
    await this.#restarting?.catch(() => undefined);
    await this.#thread.idle();
  }

  /** Ends the write path: the writer thread (which closes its store), or this thread's. */
  async close(): Promise<void> {
    this.#closing = true;
    await this.#starting;
    if (this.#thread === undefined) {
      if (this.#p.path !== undefined) await closeWritePath(this.#p.path);
      return;
    }
    await this.#restarting?.catch(() => undefined);
    await this.#thread.close();
  }

  /**
   * `writer: "auto"`: starts the writer thread once this thread has committed enough while the
   * store reads in its pool. A store that only writes keeps its writes here: the thread would
   * add two thread hops to each write (0.1–0.4 ms) and free a loop nothing else waits on.
   */
  #maybeStart(): void {
    const spawn = this.#spawn;
    if (spawn === undefined || !this.#p.readsInWorkers()) return;
    if (this.#p.ctx.writes.stats.groupsCommitted < WRITER_AFTER_COMMITS) return;
    this.#spawn = undefined;
    this.#starting = (async () => {
      const next = spawn();
      try {
        await next.start(this.#corruption);
      } catch {
        // It could not open the file: the writes go on here, as they did.
        await next.close();
        return;
      }
      if (this.#closing) {
        await next.close();
        return;
      }
      this.#handover = this.#handOver(next);
      await this.#handover;
    })();
  }

  /** Counts an operation on this thread's write path until it settles. */
  #track<T>(operation: Promise<T>): Promise<T> {
    this.#inflight++;
    return operation.finally(() => {
      if (--this.#inflight === 0) for (const settled of this.#settledWaiters.splice(0)) settled();
    });
  }

  /**
   * The writer thread takes over once the writes running here have settled (later ones wait).
   * Should a step fail, the thread is ended and the writes go on here.
   */
  async #handOver(next: WriterThread): Promise<void> {
    try {
      if (this.#inflight > 0) await new Promise<void>((settled) => this.#settledWaiters.push(settled));
      if (this.#corruption !== undefined) next.noteCorruption(this.#corruption);
      const path = this.#p.path;
      if (path !== undefined) await handOverWritePath(path);
      const building = await this.#p.cjkIndex.handOver();
      this.#thread = next;
      if (building) next.continueCjkBuild();
    } catch {
      await next.close();
    } finally {
      this.#handover = undefined;
    }
  }

  /** Notes a damaged file in this thread's guard; whether it is news. */
  #remember(error: unknown): boolean {
    const writes = this.#p.ctx.writes;
    if (writes.corrupted) return false;
    writes.noteError(error);
    if (!writes.corrupted) return false;
    this.#corruption = error;
    return true;
  }

  /** A new writer thread in place of one that ended (one start at a time). */
  #restart(): Promise<WriterThread> {
    this.#restarting ??= (async () => {
      const ended = this.#thread as WriterThread;
      this.#retired = addWriteStats(this.#retired, ended.stats);
      const next = ended.successor();
      this.#thread = next;
      try {
        await next.start(this.#corruption);
        return next;
      } finally {
        this.#restarting = undefined;
      }
    })();
    return this.#restarting;
  }
}
