import {
  chmodSync,
  closeSync,
  type FSWatcher,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  watch,
  writeSync,
} from "node:fs";

/**
 * How writer processes of one database take turns at SQLite's write lock: first come, first
 * served, with the lock handed to the next waiter the moment it is released.
 *
 * Why: SQLite has no queue for its write lock. A waiting connection polls (its busy handler, or
 * our timers), and the process that just committed almost always wins the race for the lock
 * again, because it asks microseconds after releasing it while the others sleep. So one process
 * writes a long streak while the others wait hundreds of milliseconds (figures in
 * docs/design/contention.md).
 *
 * How: a small shared file, `<db>-writers/queue`, holds one 32-byte slot per open store:
 * owner id, pid, when it began waiting (0: not waiting), a heartbeat, in
 * `process.hrtime` milliseconds, which all processes of a machine share, and the sequence number
 * of the write request it posted for the lock holder to commit (0: none; see SharedCommits). A writer that finds an
 * older waiter in the queue queues up behind it instead of racing for the lock; a writer that
 * commits wakes the oldest waiter by writing one byte to that waiter's own file,
 * `<db>-writers/wake-<slot>`, which it watches (inotify on Linux). Only the head of the queue
 * polls SQLite; the others wait for their wake-up, with a slow timer as a safety net.
 *
 * This is an ordering aid, never a lock: SQLite's lock still decides who writes. Processes that
 * do not take part (the Python agent, raw better-sqlite3) just race as before; a waiter whose
 * heartbeat is older than {@link STALE_MS} ms (killed, suspended, or its store left open and idle)
 * is ignored; a file system without change notification falls back to the timers.
 */
export class HandoffQueue {
  readonly #dir: string;
  readonly #fd: number;
  readonly #slot: number;
  readonly #me = Buffer.alloc(SLOT_BYTES);
  readonly #all = Buffer.alloc(SLOT_BYTES * SLOTS);
  readonly #wakeByte = Buffer.from([1]);
  readonly #wakeFds = new Map<number, number>();
  readonly #watcher: FSWatcher | undefined;
  readonly #staleMs: number;
  readonly #longWaitMs: number;
  #waitingSince = 0;
  /** Whether this store announced that it holds the write lock (see `hold`). */
  #holding = false;
  /** A store that announced it holds the lock, as of the last read of the queue (-1: none). */
  #holder = -1;
  #waiter: (() => void) | undefined;
  /** A wake-up that came while this store was not waiting (kept for its next wait). */
  #wokenEarly = false;
  #closed = false;
  /** Wake-ups sent to the next waiter after a commit. */
  handoffs = 0;
  /** Times this store queued behind an older waiter instead of trying the lock. */
  deferrals = 0;

  /** This store's slot in the queue. */
  get slot(): number {
    return this.#slot;
  }

  /** This store's owner id (random, per open store), as written in its slot. */
  get owner(): number {
    return this.#me.readUInt32LE(0);
  }

  /** The directory beside the database that holds the queue and the wake-up files. */
  get dir(): string {
    return this.#dir;
  }

  private constructor(dir: string, fd: number, slot: number, staleMs: number, longWaitMs: number) {
    this.#dir = dir;
    this.#staleMs = staleMs;
    this.#longWaitMs = longWaitMs;
    this.#fd = fd;
    this.#slot = slot;
    this.#me.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, 0);
    this.#me.writeUInt32LE(process.pid, 4);
    this.#writeMe();
    const wakePath = `${dir}/wake-${slot}`;
    let watcher: FSWatcher | undefined;
    try {
      closeSync(openSync(wakePath, "a", 0o600));
      watcher = watch(wakePath, { persistent: false }, () => this.#wake());
      watcher.on("error", () => {});
    } catch {
      watcher = undefined; // no change notification here: the timers carry the waits
    }
    this.#watcher = watcher;
  }

  /**
   * Joins the queue of the database at `path`, or returns `undefined` when it cannot (read-only
   * directory, every slot taken by a live process, …): writes then race for the lock as before.
   */
  static open(
    path: string,
    options: { staleMs?: number; longWaitMs?: number } = {},
  ): HandoffQueue | undefined {
    const staleMs = options.staleMs ?? STALE_MS;
    const longWaitMs = options.longWaitMs ?? LONG_WAIT_MS;
    const dir = `${path}-writers`;
    let fd: number | undefined;
    try {
      try {
        mkdirSync(dir, { mode: 0o700 });
        chmodSync(dir, 0o700);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      // Never follow a link planted in place of the directory or the queue.
      if (!lstatSync(dir).isDirectory()) return undefined;
      const queuePath = `${dir}/queue`;
      try {
        if (lstatSync(queuePath).isSymbolicLink()) return undefined;
      } catch {
        // not created yet
      }
      closeSync(openSync(queuePath, "a+", 0o600));
      fd = openSync(queuePath, "r+");
      const all = Buffer.alloc(SLOT_BYTES * SLOTS);
      readSync(fd, all, 0, all.length, 0);
      for (let slot = 0; slot < SLOTS; slot++) {
        const pid = all.readUInt32LE(slot * SLOT_BYTES + 4);
        if (pid === 0 || !isAlive(pid)) return new HandoffQueue(dir, fd, slot, staleMs, longWaitMs);
      }
      closeSync(fd);
      return undefined;
    } catch {
      if (fd !== undefined) closeSync(fd);
      return undefined;
    }
  }

  /**
   * Whose turn it is: `go` when no live writer has waited longer than this one (try the lock);
   * `queue` when one has, for less than {@link LONG_WAIT_MS} (wait to be woken); `race` when
   * the head has waited longer than that: the lock is held long (a VACUUM, a process that hands
   * nothing off, a stuck one), and every waiter tries it on its own timer again, as without the
   * queue, until turns come quickly again.
   */
  turn(): "go" | "queue" | "race" {
    if (this.#closed) return "go";
    const head = this.#head();
    // A store that holds the lock and commits waiters' posted writes: queue behind it.
    if (head < 0) return this.#holder >= 0 ? "queue" : "go";
    const headSince = this.#all.readDoubleLE(head * SLOT_BYTES + 8);
    if (this.#waitingSince !== 0 && headSince >= this.#waitingSince) return "go";
    return monotonicMs() - headSince >= this.#longWaitMs ? "race" : "queue";
  }

  /** Whether a live writer has waited longer than this one (its turn comes first). */
  mustDefer(): boolean {
    return this.turn() !== "go";
  }

  /** Enters the queue (keeps its place if already in it) and refreshes the heartbeat. */
  enqueue(): void {
    if (this.#closed) return;
    if (this.#waitingSince === 0) this.#waitingSince = monotonicMs();
    this.#holding = false; // waiting, so not holding the lock
    this.#writeMe();
  }

  /** Leaves the queue (this store holds the lock, or gave up waiting), and drops `hold`. */
  leave(): void {
    if (this.#closed || (this.#waitingSince === 0 && !this.#holding)) return;
    this.#waitingSince = 0;
    this.#holding = false;
    this.#writeMe();
  }

  /**
   * Announces that this store holds the write lock and will commit the writes others post
   * (until `leave`): writers that arrive meanwhile queue and post instead of polling SQLite.
   */
  hold(): void {
    if (this.#closed) return;
    this.#waitingSince = 0;
    this.#holding = true;
    this.#writeMe();
  }

  /** After releasing the lock: wakes the oldest live waiter, if any. */
  handOff(): void {
    if (this.#closed) return;
    const head = this.#head();
    if (head < 0) return;
    if (this.wake(head)) this.handoffs++;
  }

  /**
   * Whether, at the last read of the queue, another store announced it holds the lock (it
   * commits posted writes and wakes their owners when done).
   */
  get holderSeen(): boolean {
    return this.#holder >= 0;
  }

  /** Wakes the store in `slot` (writes one byte to its watched file); false if it could not. */
  wake(slot: number): boolean {
    if (this.#closed) return false;
    try {
      let fd = this.#wakeFds.get(slot);
      if (fd === undefined) {
        fd = openSync(`${this.#dir}/wake-${slot}`, "r+");
        this.#wakeFds.set(slot, fd);
      }
      writeSync(fd, this.#wakeByte, 0, 1, 0);
      return true;
    } catch {
      return false; // the waiter's file is gone: its own timer wakes it
    }
  }

  /** Records in this store's slot the request it posted (`seq`), or that it has none (0). */
  setPosted(seq: number): void {
    if (this.#closed) return;
    this.#me.writeUInt32LE(seq, 24);
    this.#writeMe();
  }

  /**
   * The requests other live stores have posted (one read of the queue file).
   */
  postedRequests(): Array<{ slot: number; owner: number; pid: number; seq: number }> {
    const out: Array<{ slot: number; owner: number; pid: number; seq: number }> = [];
    if (this.#closed) return out;
    const all = this.#all;
    readSync(this.#fd, all, 0, all.length, 0);
    for (let slot = 0; slot < SLOTS; slot++) {
      if (slot === this.#slot) continue;
      const at = slot * SLOT_BYTES;
      const seq = all.readUInt32LE(at + 24);
      const pid = all.readUInt32LE(at + 4);
      if (seq === 0 || pid === 0 || !isAlive(pid)) continue;
      out.push({ slot, owner: all.readUInt32LE(at), pid, seq });
    }
    return out;
  }

  /**
   * Waits until this store is woken (its turn may have come) or `ms` pass, whichever is first.
   * Only the head of the queue needs short timeouts; the others are woken in turn.
   */
  wait(ms: number): Promise<void> {
    if (this.#wokenEarly) {
      // Woken while not waiting (between two waits): that wake-up is for this wait.
      this.#wokenEarly = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiter = undefined;
        resolve();
      }, ms);
      this.#waiter = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Leaves the queue for good and frees the slot. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#waitingSince = 0;
    this.#me.writeUInt32LE(0, 4);
    this.#me.writeUInt32LE(0, 24);
    try {
      this.#writeMe();
    } catch {
      // best effort: a stale slot is skipped by its heartbeat and reused once its pid is gone
    }
    this.#watcher?.close();
    for (const fd of this.#wakeFds.values()) closeSync(fd);
    closeSync(this.#fd);
    this.#waiter?.();
  }

  #wake(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter === undefined) this.#wokenEarly = true;
    else waiter();
  }

  /** Writes this store's slot (every caller has checked that the queue is open, or is closing it). */
  #writeMe(): void {
    this.#me.writeDoubleLE(this.#waitingSince, 8);
    this.#me.writeDoubleLE(monotonicMs(), 16);
    this.#me.writeUInt32LE(this.#holding ? 1 : 0, 28);
    writeSync(this.#fd, this.#me, 0, SLOT_BYTES, this.#slot * SLOT_BYTES);
  }

  /**
   * The slot of the oldest live waiter other than this store, or -1. Also notes, in `#holder`,
   * a live store other than this one that announced it holds the lock (-1: none).
   */
  #head(): number {
    const all = this.#all;
    const read = readSync(this.#fd, all, 0, all.length, 0);
    const freshAfter = monotonicMs() - this.#staleMs;
    let best = -1;
    let bestSince = Number.POSITIVE_INFINITY;
    this.#holder = -1;
    for (let slot = 0; slot * SLOT_BYTES < read; slot++) {
      if (slot === this.#slot) continue;
      const at = slot * SLOT_BYTES;
      if (all.readUInt32LE(at + 4) === 0) continue;
      if (all.readUInt32LE(at + 28) === 1 && all.readDoubleLE(at + 16) >= freshAfter) this.#holder = slot;
      const since = all.readDoubleLE(at + 8);
      if (since === 0 || since >= bestSince) continue;
      if (all.readDoubleLE(at + 16) < freshAfter) continue;
      best = slot;
      bestSince = since;
    }
    return best;
  }
}

const SLOT_BYTES = 32;
const SLOTS = 64;
/** A waiter silent for this long (ms) is passed over: killed, suspended or stuck. */
export const STALE_MS = 50;
/** A head waiting longer than this (ms) means a long hold: every waiter tries the lock again. */
export const LONG_WAIT_MS = 100;

/** Milliseconds on the clock every process of the machine shares (`process.hrtime`). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
