import type { SideIndexStatus } from "@hermes/core";
import type { SqlExecutor, TransactionRunner } from "@hermes/schema";
import { catchUpCjkIndex, planSearchWithinLimits } from "@hermes/search";
import type { ConnectionPragmas } from "../database-connection.js";
import { type CjkBuildMessage, CjkBuildThread } from "./cjk-build-thread.js";
import { type CjkIndexProbe, probeCjkIndex } from "./cjk-index-probe.js";

/**
 * When a writable store builds its short-CJK index: `lazy` (default) on the first search of a
 * one- or two-character CJK term, `eager` as soon as it opens, `off` never (an index already
 * in the file is used while it is current, else read around its queue or scanned, as by a
 * read-only store).
 */
export type CjkIndexMode = "lazy" | "eager" | "off";

/** What a writable store's builder needs: the file and the store's own write settings. */
export interface CjkBuildSettings {
  readonly path: string;
  readonly pragmas: ConnectionPragmas;
  readonly deadlineMs: number;
  readonly fairWrites: boolean;
  readonly mode: CjkIndexMode;
}

/**
 * Most work (messages to index or queued changes) brought up to date inline, in the search's own
 * write transaction; more goes to the builder's thread. About 0.1 ms a message on this machine
 * (figures in docs/design/cjk-side-index.md), so an inline catch-up stays near 25 ms.
 */
export const CJK_INLINE_MAX = 256;
/** How long one of the builder's write transactions holds the lock, in ms (its size adapts). */
export const CJK_BUILD_TARGET_MS = 10;
/** Pause between two of the builder's transactions, in ms, so other writers get the lock. */
export const CJK_BUILD_PAUSE_MS = 2;
/**
 * How long a search waits for its inline catch-up, in ms, before it reads the index around its
 * queue instead (the catch-up goes on after it): beside busy writers the catch-up's turn at the
 * write lock can take seconds, and reading around the queue is about as fast and as exact.
 */
export const CJK_CATCH_UP_WAIT_MS = 50;
/** After a failed build, the next one starts no sooner than this, in ms (searches read around it meanwhile). */
export const CJK_BUILD_RETRY_MS = 10_000;

/** What a store closed before anyone asked reports. */
const CLOSED_UNKNOWN: SideIndexStatus = Object.freeze({
  state: "absent",
  active: false,
  indexedRows: 0,
  totalRows: 0,
  pendingChanges: 0,
  lastError: null,
});

/**
 * The store's short-CJK side index: whether a search may use it, and its build. A search asks
 * {@link prepare}: a current index is used; a small backlog is applied inline; anything larger
 * (the first build of a big file, many messages written while the store was closed, an index
 * of an earlier version to upgrade) starts a build on a worker thread, and meanwhile the search
 * reads the index around its queue (or scans while it is incomplete), with the same hits. Read-only stores (no settings) never build; they report.
 */
export class CjkSideIndex {
  readonly #db: () => SqlExecutor;
  #settings: CjkBuildSettings | undefined;
  #thread: CjkBuildThread | undefined;
  #lastError: string | null = null;
  /** No new build before this time (`performance.now()`), after a failed one. */
  #retryAt = 0;
  #last: SideIndexStatus | undefined;
  #closed = false;
  readonly #builder: CjkBuilderLink | undefined;
  /** The inline catch-up under way (one at a time: later searches wait for the same one). */
  #catchingUp: Promise<void> | undefined;
  readonly #onBuilding: ((active: boolean) => void) | undefined;

  /**
   * `db`: the store's connection (read on the caller's thread); `settings`: absent for a
   * read-only store, and for a store whose writer thread builds the index (`builder` then says
   * what that thread's builder does, and the writer's index reports through `builder.changed`).
   * `onBuilding(active)`: called as this side's builder thread starts and ends (the store then
   * keeps its connection out of SQLite's busy handler: the builder takes the lock every few ms).
   */
  constructor(
    db: () => SqlExecutor,
    settings?: CjkBuildSettings,
    builder?: CjkBuilderLink,
    onBuilding?: (active: boolean) => void,
  ) {
    this.#db = db;
    this.#settings = settings;
    this.#builder = builder;
    this.#onBuilding = onBuilding;
  }

  /** Whether a build runs (here, or in the store's writer thread), and how the last one failed. */
  get builder(): { active: boolean; lastError: string | null } {
    const remote = this.#builder?.state?.();
    if (remote !== undefined) return remote;
    return { active: this.#thread !== undefined, lastError: this.#lastError };
  }

  /** With `cjkIndex: "eager"`, starts the build when there is anything to do (the store calls this once open). */
  opened(): void {
    if (this.#settings?.mode === "eager" && probeCjkIndex(this.#db()).work > 0) this.#start();
  }

  /** Where the index stands (cheap; the last one seen once the store is closed). */
  status(): SideIndexStatus {
    if (this.#closed) return this.#last ?? CLOSED_UNKNOWN;
    let probe: CjkIndexProbe;
    try {
      probe = probeCjkIndex(this.#db());
    } catch (error) {
      // stats() never fails: a file that cannot be read now reports what was seen last.
      return { ...(this.#last ?? CLOSED_UNKNOWN), lastError: (error as Error).message };
    }
    const { active, lastError } = this.builder;
    this.#last = {
      ...probe.status,
      // A build just started has not created the index yet.
      state: active && probe.status.state === "absent" ? "building" : probe.status.state,
      active,
      lastError,
    };
    return this.#last;
  }

  /**
   * Whether a search may read the index now. Brings a backlog of at most {@link CJK_INLINE_MAX}
   * up to date inline through `transaction` (errors are the caller's to handle). When only its
   * queue is left, a catch-up not done within {@link CJK_CATCH_UP_WAIT_MS} (waiting for the
   * write lock) goes on after the search, which answers `false` and reads around the queue. A larger backlog starts the builder's thread and answers
   * `false` (read around the queue, or scan), as while a build runs.
   */
  async prepare(transaction: TransactionRunner): Promise<boolean> {
    if (this.#thread !== undefined) return false;
    const db = this.#db();
    const probe: CjkIndexProbe = probeCjkIndex(db);
    if (probe.work === 0) return true;
    if (this.#settings === undefined || this.#settings.mode === "off" || this.#closed) return false;
    if (probe.work > CJK_INLINE_MAX) {
      this.#start();
      return false;
    }
    let run = this.#catchingUp;
    if (run === undefined) {
      const started = catchUpCjkIndex(db, transaction);
      run = started;
      this.#catchingUp = started;
      const settled = () => {
        if (this.#catchingUp === started) this.#catchingUp = undefined;
      };
      started.then(settled, settled);
    }
    // Only an index complete but for its queue can be read around it; otherwise (creating it,
    // its backfill) the search waits, and scans if the catch-up fails.
    if (probe.status.state !== "ready") {
      await run;
      return true;
    }
    if (await doneWithin(run, CJK_CATCH_UP_WAIT_MS)) return true;
    run.catch(() => {}); // a later failure is the next search's to meet (it catches up again)
    return false;
  }

  /**
   * For a store with read workers: whether a search of `query` is a scan a worker can run,
   * because it has short CJK terms the index cannot serve now (a build runs, or starts here). A
   * small backlog is applied here first, as by {@link prepare}; an error leaves the decision to
   * the search on this thread (which reports it or scans).
   */
  async scanInWorker(query: string, transaction: TransactionRunner): Promise<boolean> {
    if (!usesShortCjkIndex(query)) return false;
    try {
      return !(await this.prepare(transaction));
    } catch {
      return false;
    }
  }

  #start(): void {
    const s = this.#settings;
    if (s === undefined || this.#thread !== undefined || this.#closed) return;
    // A build that failed (disk full, lock held past the deadline) is not retried at once.
    if (performance.now() < this.#retryAt) return;
    const thread = new CjkBuildThread(
      {
        path: s.path,
        pragmas: s.pragmas,
        deadlineMs: s.deadlineMs,
        fairWrites: s.fairWrites,
        targetMs: CJK_BUILD_TARGET_MS,
        pauseMs: CJK_BUILD_PAUSE_MS,
      },
      (outcome: CjkBuildMessage) => {
        if (this.#thread === thread) this.#thread = undefined;
        this.#onBuilding?.(false);
        if (outcome.kind === "done") this.#lastError = null;
        if (outcome.kind === "failed") {
          this.#lastError = outcome.message;
          this.#retryAt = performance.now() + CJK_BUILD_RETRY_MS;
        }
        this.#builder?.changed?.(this.builder);
      },
    );
    this.#thread = thread;
    this.#onBuilding?.(true);
    this.#builder?.changed?.(this.builder);
  }

  /**
   * The store's writer thread builds the index from now on (`writer: "auto"` once it started): a
   * build running here stops after its current transaction (its work is kept) and none starts
   * here again; the status reports the writer's builder. Whether a build was running (the writer
   * thread then goes on with it).
   */
  async handOver(): Promise<boolean> {
    this.#settings = undefined;
    const building = this.#thread !== undefined;
    await this.#thread?.stop();
    return building;
  }

  /** Starts a build when there is work, whatever the mode (the writer thread goes on with one). */
  continueBuild(): void {
    if (probeCjkIndex(this.#db()).work > 0) this.#start();
  }

  /** Stops a running build after its current transaction (its work is kept); idempotent. */
  async close(): Promise<void> {
    if (!this.#closed) this.status();
    this.#closed = true;
    await this.#thread?.stop();
    if (this.#last !== undefined)
      this.#last = { ...this.#last, active: false, lastError: this.builder.lastError };
  }
}

/**
 * How a store's index meets a builder on another thread: on the caller's side, `state` is what
 * the writer thread last reported of its builder; in the writer thread, `changed` reports each
 * start and end of a build to the caller.
 */
export interface CjkBuilderLink {
  state?(): { active: boolean; lastError: string | null } | undefined;
  changed?(state: { active: boolean; lastError: string | null }): void;
}

/** Whether `work` settles within `ms` (its rejection, if first, is thrown). */
async function doneWithin(work: Promise<void>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `query` has one- or two-character CJK terms (served by the index); `false` when invalid. */
function usesShortCjkIndex(query: string): boolean {
  try {
    const plan = planSearchWithinLimits(query);
    return plan.kind === "substring" && plan.usesCjkIndex;
  } catch {
    return false;
  }
}
