import type { DatabaseConnection } from "../database-connection.js";
import type { CheckpointMode, CheckpointOutcome, CheckpointThread } from "./checkpoint-thread.js";
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
 * With a {@link CheckpointThread}, these checkpoints run there instead of on this connection (the
 * caller's thread): the periodic ones are started and not waited for (at most one running and
 * one waiting there; a request past that is dropped, the next trigger asks again); writes wait on
 * timers for a RESTART there ({@link restarting}) and for an escalation's TRUNCATE, held back as
 * before. They count when started.
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
  readonly #thread: CheckpointThread | undefined;
  #restarting: Promise<unknown> | undefined;

  constructor(
    conn: DatabaseConnection,
    policy: WritePolicy,
    walSize: () => number,
    stats: WriteStats,
    guard: CorruptionGuard,
    thread?: CheckpointThread,
  ) {
    this.#conn = conn;
    this.#thread = thread;
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
      this.#background("PASSIVE");
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
      if (this.#background("RESTART")) this.#stats.walRestarts++;
    }
  }

  /** `mode` on the thread when there is one (not waited for; `false`: dropped), else here. */
  #background(mode: "PASSIVE" | "RESTART"): boolean {
    const thread = this.#thread;
    if (thread === undefined) {
      this.checkpoint(mode);
      return true;
    }
    // Bounded: one running and one waiting; a RESTART while another is pending would do nothing more.
    if (thread.pending >= 2 || (mode === "RESTART" && thread.blocksWriters) || this.#guard.corrupted) {
      return false;
    }
    this.#stats.checkpoints++;
    const running = thread.run(mode).then((outcome) => {
      if (this.#restarting === running) this.#restarting = undefined;
      return this.#noteOutcome(outcome);
    });
    if (mode === "RESTART") this.#restarting = running;
    return true;
  }

  /**
   * The RESTART running on the thread, if any: the queue starts no write until it has ended, as
   * when it ran here between two commits (writes back to back would otherwise keep it from the
   * lock it waits for, and the WAL would grow on).
   */
  get restarting(): Promise<unknown> | undefined {
    return this.#restarting;
  }

  /** A checkpoint that failed on the thread: a damaged file stops all writing, as here. */
  #noteOutcome(outcome: CheckpointOutcome): boolean {
    if (outcome.kind === "failed") this.#guard.noteError(outcome.error);
    return outcome.kind === "done";
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
      const done = await this.#escalate("TRUNCATE");
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

  /** One checkpoint of an escalation: on the thread (waited for on timers) when there is one. */
  async #escalate(mode: CheckpointMode): Promise<boolean> {
    const thread = this.#thread;
    if (thread === undefined) return this.checkpoint(mode);
    if (this.#guard.corrupted) return false;
    this.#stats.checkpoints++;
    return this.#noteOutcome(await thread.run(mode));
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
