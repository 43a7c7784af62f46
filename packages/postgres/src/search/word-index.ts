import { sql } from "kysely";
import type { PgDb } from "../pg-database.js";
import { type SealReport, type SealStep, sealWordRanges } from "./seal-word-ranges.js";
import { readWordRanges, type WordRange } from "./word-ranges.js";

/** Tuning of the split word index (`openPostgresSessionStore({ wordIndex })`). */
export interface WordIndexOptions {
  /**
   * Ids the open range may hold before the store whose append crosses the mark seals it
   * (default 20,000): the open range's matches are all read and ranked on every ranked query,
   * and each seal builds indexes concurrently (~4 scans of `messages`).
   */
  readonly sealEvery?: number;
  /** How long the store uses the ranges it read before reading them again, in ms (default 1,000). */
  readonly refreshMs?: number;
  /**
   * How long a seal keeps the replaced indexes after switching to the new ranges, in ms
   * (default 5,000), so that stores still on the old ranges (see `refreshMs`) read indexes:
   * their results are right either way, only slower once the old indexes are gone.
   */
  readonly dropDelayMs?: number;
}

/** Defaults of {@link WordIndexOptions}. */
export const WORD_INDEX_DEFAULTS = { sealEvery: 20_000, refreshMs: 1_000, dropDelayMs: 5_000 } as const;

/** Pause between two automatic seal attempts (busy, not needed), and after a failed one, in ms. */
const RETRY_MS = 1_000;
const RETRY_AFTER_ERROR_MS = 30_000;

/**
 * The word index as one store sees it: which layout serves ranked queries (`rum`: RUM
 * sealed ranges and a GIN open range; else one GIN index), the ranges it last read, and the
 * seals it runs: off the append path, on a connection of its own, started by the append that
 * crosses the mark (`noteAppended`), cancelled by `close()`.
 */
export class WordIndex {
  readonly #db: PgDb;
  readonly #o: Required<WordIndexOptions>;
  #ranges: WordRange[] = [];
  #readAt = Number.NEGATIVE_INFINITY;
  #sealing: Promise<SealReport> | null = null;
  #sealPid: number | null = null;
  #stop = new AbortController();
  #nextTry = 0;
  #closed = false;
  /** The last automatic seal's failure (reported by `verifySearchIndex`), `null` after a success. */
  lastSealError: unknown = null;

  constructor(db: PgDb, ranges: readonly WordRange[], o: WordIndexOptions = {}) {
    this.#db = db;
    this.#ranges = [...ranges];
    this.#readAt = performance.now();
    this.#o = { ...WORD_INDEX_DEFAULTS, ...o };
  }

  get options(): Required<WordIndexOptions> {
    return this.#o;
  }

  /**
   * Whether the split layout serves ranked search (its registry holds ranges: RUM is
   * installed), else the GIN layout; as of the last read of the registry.
   */
  get rum(): boolean {
    return this.#ranges.length > 0;
  }

  /**
   * The ranges a query should use: the registry as read at most `refreshMs` ago (another
   * store's seal, or a layout change, shows within that time); empty on the GIN layout.
   */
  async ranges(db: PgDb = this.#db): Promise<readonly WordRange[]> {
    if (performance.now() - this.#readAt >= this.#o.refreshMs) await this.refresh(db);
    return this.#ranges;
  }

  /** Reads the registry now (after this store changed it, or to skip `refreshMs`). */
  async refresh(db: PgDb = this.#db): Promise<void> {
    this.#ranges = await readWordRanges(db);
    this.#readAt = performance.now();
  }

  /** After an append of ids up to `id`: starts a seal when the open range has reached the mark. */
  noteAppended(id: number): void {
    if (!this.rum || this.#closed || this.#sealing !== null) return;
    const open = this.#ranges[this.#ranges.length - 1];
    if (open === undefined || id - open.lo < this.#o.sealEvery) return;
    if (performance.now() < this.#nextTry) return;
    this.#nextTry = performance.now() + RETRY_MS;
    this.#run({}).then(
      () => {
        this.lastSealError = null;
      },
      (error: unknown) => {
        if (this.#closed) return;
        this.lastSealError = error;
        this.#nextTry = performance.now() + RETRY_AFTER_ERROR_MS;
      },
    );
  }

  /**
   * Seals now (after a seal this store is running): the open range's rows move into a sealed
   * range whatever its size (`force`), or only past the mark.
   */
  async seal(
    o: { force?: boolean; onStep?: (step: SealStep) => void | Promise<void> } = {},
  ): Promise<SealReport> {
    await this.#sealing?.catch(() => {});
    return this.#run(o);
  }

  #run(o: { force?: boolean; onStep?: (step: SealStep) => void | Promise<void> }): Promise<SealReport> {
    const signal = this.#stop.signal;
    const run = this.#db
      .connection()
      .execute(async (conn) => {
        this.#sealPid = Number(
          (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(conn)).rows[0]!.pid,
        );
        return sealWordRanges(conn, {
          sealEvery: this.#o.sealEvery,
          dropDelayMs: this.#o.dropDelayMs,
          force: o.force,
          signal,
          onStep: o.onStep === undefined ? undefined : (step) => o.onStep!(step),
        });
      })
      .finally(() => {
        this.#sealPid = null;
      });
    // Whatever the outcome, the registry as it is now (another store may have sealed).
    const tracked = run.then(async (report) => {
      if (!this.#closed) await this.refresh();
      return report;
    });
    this.#sealing = tracked;
    void tracked
      .catch(() => {})
      .finally(() => {
        if (this.#sealing === tracked) this.#sealing = null;
      });
    return tracked;
  }

  /**
   * Stops a seal under way (its statement cancelled on the server; what it built is dropped by
   * the next seal) and waits for it to end.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stop.abort();
    const pid = this.#sealPid;
    if (pid !== null) await sql`SELECT pg_cancel_backend(${pid})`.execute(this.#db).catch(() => {});
    await this.#sealing?.catch(() => {});
  }
}
