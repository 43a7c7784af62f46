import type { DatabaseConnection } from "../database-connection.js";
import type { CorruptionGuard } from "./corruption-guard.js";
import type { WritePolicy } from "./write-policy.js";
import type { WriteStats } from "./write-stats.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Keeps the WAL bounded while this process writes:
 * - a PASSIVE checkpoint every `checkpointEvery` transactions that wrote;
 * - a RESTART checkpoint when a commit grows the WAL file past `walRestartBytes` (writers back to
 *   back never leave SQLite the quiet moment it needs to reset the WAL after PASSIVE ones);
 * - when the WAL outgrows `walMaxBytes` (readers holding snapshots starve PASSIVE), an escalation
 *   to TRUNCATE checkpoints before the next group, holding this process's writes back for at most
 *   `walPauseBudgetMs` so the readers' snapshots move on.
 * Nothing is checkpointed once the file was found damaged.
 *
 * They run on the write connection, after the commit (and after the lock was handed to the next
 * writer, see WriteQueue), on the thread that writes: the caller's, or the writer thread. SQLite's
 * own checkpoint inside COMMIT is off (`wal_autocheckpoint = 0`): these take its place.
 */
export class WalCheckpoints {
  readonly #conn: DatabaseConnection;
  readonly #policy: WritePolicy;
  readonly #walSize: () => number;
  readonly #stats: WriteStats;
  readonly #guard: CorruptionGuard;
  /** Set when the WAL outgrew `walMaxBytes`: escalate before the next group. */
  #pressure = false;
  /**
   * WAL size that triggers the next escalation: `walMaxBytes`, raised by another `walMaxBytes`
   * after an escalation that could not reset the WAL (a reader holding one snapshot for minutes
   * must not cost every write a pause).
   */
  #escalateAt: number;
  /** WAL file size at the previous commit. */
  #lastSize = 0;
  /** Committed transactions that wrote something since the last periodic checkpoint. */
  #sinceCheckpoint = 0;

  constructor(
    conn: DatabaseConnection,
    policy: WritePolicy,
    walSize: () => number,
    stats: WriteStats,
    guard: CorruptionGuard,
  ) {
    this.#conn = conn;
    this.#policy = policy;
    this.#walSize = walSize;
    this.#stats = stats;
    this.#guard = guard;
    this.#escalateAt = policy.walMaxBytes;
  }

  /** Whether the WAL outgrew its bound: {@link relieve} before the next group. */
  get pressure(): boolean {
    return this.#pressure;
  }

  /** After each committed transaction (`wrote`: it wrote something): the periodic checkpoint, then the WAL's size. */
  afterCommit(wrote: boolean): void {
    // The cadence counts transactions that wrote, as the reference does (there every write is one
    // transaction): a checkpoint moves the WAL's pages, and a group writes its shared pages once.
    if (wrote) this.#sinceCheckpoint++;
    const every = this.#policy.checkpointEvery;
    if (every > 0 && this.#sinceCheckpoint >= every) {
      this.#sinceCheckpoint = 0;
      this.checkpoint("PASSIVE");
    }
    this.#watch();
  }

  /**
   * After each commit (one `stat`, microseconds next to the commit's sync): has the WAL file
   * outgrown its bound? (It only grows when the live log outgrows it.)
   */
  #watch(): void {
    const size = this.#walSize();
    // The file size is the WAL's high-water mark, not its live content: after a reset SQLite
    // rewrites the file from the start. So it grows only while the log is longer than ever
    // before, which is the moment to force a reset (not at every commit of a big, reused file).
    const grew = size > this.#lastSize;
    this.#lastSize = size;
    if (size > this.#stats.walBytesMax) this.#stats.walBytesMax = size;
    if (size > this.#escalateAt) this.#pressure = true;
    else if (grew && size > this.#policy.walRestartBytes) {
      this.#stats.walRestarts++;
      this.checkpoint("RESTART");
    }
  }

  /**
   * The WAL outgrew its bound: PASSIVE cannot reset it while readers hold snapshots into it.
   * TRUNCATE checkpoints (each waits only the busy timeout for readers), retried on timers for
   * at most `walPauseBudgetMs` while this process starts no new write, so that readers finish
   * their snapshots and new ones read from the database file.
   */
  async relieve(): Promise<void> {
    this.#pressure = false;
    this.#stats.walEscalations++;
    const started = performance.now();
    let backoff = 1;
    for (;;) {
      const done = this.checkpoint("TRUNCATE");
      const size = this.#walSize();
      if (done || size <= this.#policy.walMaxBytes) {
        this.#escalateAt = this.#policy.walMaxBytes;
        return;
      }
      if (performance.now() - started >= this.#policy.walPauseBudgetMs) {
        this.#escalateAt = size + this.#policy.walMaxBytes;
        return;
      }
      await sleep(backoff);
      backoff = Math.min(backoff * 2, 16);
    }
  }

  /**
   * Runs `PRAGMA wal_checkpoint(mode)` outside any transaction; never throws (a busy checkpoint
   * is not an error). Returns whether it completed (`busy = 0`).
   */
  checkpoint(mode: "PASSIVE" | "FULL" | "RESTART" | "TRUNCATE"): boolean {
    if (this.#conn.inTransaction || this.#guard.corrupted) return false;
    try {
      const row = this.#conn.db.pragma(`wal_checkpoint(${mode})`, { simple: false }) as Array<{
        busy?: number;
      }>;
      this.#stats.checkpoints++;
      return row[0]?.busy === 0;
    } catch {
      return false;
    }
  }
}
