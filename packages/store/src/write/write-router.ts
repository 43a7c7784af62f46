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
import { closeWritePath, type WritePath } from "./write-path.js";
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
  readonly readOnly: boolean;
  readonly cjkIndex: CjkSideIndex;
}

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
  #starting: Promise<WriterThread> | undefined;
  /** Counters of writer threads that ended (their successors count from zero). */
  #retired: WriteStats = createWriteStats();
  /** The first damage of the file seen, passed to every new writer thread. */
  #corruption: unknown;

  constructor(parts: WriteRouterParts) {
    this.#p = parts;
    this.#thread = parts.thread;
  }

  /** @internal The writer thread (`undefined` when writes run on this thread); tests. */
  get thread(): WriterThread | undefined {
    return this.#thread;
  }

  /** Runs the write `name`: here, or posted to the writer thread. */
  call<K extends WriteMethod>(name: K, args: WriteArgs<K>, o?: WriterCallOptions): Promise<WriteResult<K>> {
    const ctx = this.#p.use(name);
    if (this.#thread === undefined) return runWrite(ctx, name, args);
    const posted = this.#thread.alive
      ? this.#thread.call(name, args, o)
      : this.#restart().then((thread) => thread.call(name, args, o));
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
  verifySearchIndex(fresh: () => StoreContext): Promise<SearchIndexReport> {
    if (this.#thread === undefined) return search.verifySearchIndex(fresh());
    return this.call("verifySearchIndex", []);
  }

  /**
   * Whether a search goes to the writer thread: one with short CJK terms, whose index is brought
   * up to date first (a write) and then read on the same connection, current.
   */
  searchesInWriter(query: string): boolean {
    return this.#thread !== undefined && searchInThread(query);
  }

  /**
   * A search in the writer thread (see {@link searchesInWriter}); `null` when its terms are to be
   * scanned (the index is being built), which the caller does as any read. An abort drops its answer.
   */
  search(
    query: string,
    rest: SearchMessagesOptions | undefined,
    signal?: AbortSignal,
  ): Promise<SearchHit[] | null> {
    return this.call("searchWithCjkIndex", [query, rest], { signal });
  }

  /**
   * Without a writer thread, with a pool: whether a search may run in a read worker (not one
   * with short CJK terms, unless their index cannot serve them now and they are scanned anyway;
   * a small backlog of the index is brought up to date here first).
   */
  async scanInWorker(query: string): Promise<boolean> {
    const { readOnly, cjkIndex, ctx } = this.#p;
    return (
      readOnly ||
      !searchInThread(query) ||
      (await cjkIndex.scanInWorker(query, (label, fn) => ctx.writes.run(label, fn)))
    );
  }

  /**
   * Records `error` if it shows the database file damaged (reads report theirs here), so that no
   * later write or checkpoint touches the file: this thread's queue, and the writer thread.
   */
  noteError(error: unknown): void {
    if (this.#remember(error)) this.#thread?.noteCorruption(error);
  }

  /** The write counters: this thread's queue, or the writer threads' (as of their last answers). */
  stats(): WriteStats {
    const thread = this.#thread;
    return thread === undefined ? this.#p.ctx.writes.stats : addWriteStats(this.#retired, thread.stats);
  }

  /** Resolves once every write made so far has settled. */
  async whenIdle(): Promise<void> {
    if (this.#thread === undefined) return this.#p.ctx.writes.whenIdle();
    await this.#starting?.catch(() => undefined);
    await this.#thread.idle();
  }

  /** Ends the write path: the writer thread (which closes its store), or this thread's. */
  async close(): Promise<void> {
    if (this.#thread === undefined) {
      if (this.#p.path !== undefined) await closeWritePath(this.#p.path);
      return;
    }
    await this.#starting?.catch(() => undefined);
    await this.#thread.close();
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
    this.#starting ??= (async () => {
      const ended = this.#thread as WriterThread;
      this.#retired = addWriteStats(this.#retired, ended.stats);
      const next = ended.successor();
      this.#thread = next;
      try {
        await next.start(this.#corruption);
        return next;
      } finally {
        this.#starting = undefined;
      }
    })();
    return this.#starting;
  }
}
