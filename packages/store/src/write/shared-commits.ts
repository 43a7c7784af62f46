import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import type { DatabaseConnection } from "../database-connection.js";
import { type HandoffQueue, monotonicMs } from "./handoff-queue.js";

/**
 * The table of receipts: one row per request a lock holder committed for another process,
 * written in the same transaction as the request's rows. Created by the first holder that
 * serves a request (a file only one process writes never gets it); the reference ignores it.
 */
export const RECEIPTS_TABLE = "hermes_write_receipts";

const CREATE_RECEIPTS =
  `CREATE TABLE IF NOT EXISTS ${RECEIPTS_TABLE} (owner TEXT NOT NULL, seq INTEGER NOT NULL, ` +
  "result TEXT NOT NULL, written_at REAL NOT NULL, PRIMARY KEY (owner, seq)) WITHOUT ROWID";

/** Receipts older than this (s) are pruned even when their owner never acknowledged them. */
const RECEIPT_MAX_AGE_S = 24 * 60 * 60;

/** Every this many served requests, the holder prunes receipts past RECEIPT_MAX_AGE_S. */
const PRUNE_EVERY = 512;

/**
 * Applies the items of one kind of write (appends) inside the caller's transaction; returns one
 * JSON-serializable value per item, in order. Throws if any item fails.
 */
export type SharedApply = (items: readonly unknown[]) => readonly unknown[];

/** What became of a posted request. */
export type Receipt =
  | { applied: true; values: readonly unknown[] }
  /** Declined by the holder (a write failed there): the owner writes these `count` itself. */
  | { applied: false; count: number };

/** A request this process claimed and applied in its open transaction. */
export interface ClaimedRequest {
  readonly slot: number;
  readonly claimPath: string;
  /** Items written (0 when it was declined). */
  readonly applied: number;
}

/** The body of a request file. */
interface RequestBody {
  v: 1;
  owner: string;
  pid: number;
  seq: number;
  /** The owner's last receipt it has read: the holder deletes it and older ones. */
  ack: number;
  key: string;
  items: unknown[];
  /** `monotonicMs()` after which the request must not be applied (the owner's deadline nears). */
  notAfter: number;
}

/**
 * Group commit across processes: a writer waiting for the lock posts its writes, and whichever
 * process holds the lock applies them in its own transaction, with a receipt, and syncs once for
 * all. One WAL sync per append is otherwise the floor of any turn-taking between processes.
 *
 * The files, in the queue's directory (`<db>-writers/`, 0700):
 * - `req-<slot>-<owner>-<seq>`: a posted request (written under a temporary name, then renamed
 *   into place, so it is never read half-written). Its slot in the queue file carries `seq`, so a
 *   holder finds it without listing the directory.
 * - `claim-<slot>-<owner>-<seq>`: the same file, renamed by the holder that applies it. A rename
 *   succeeds once, so two holders never apply one request, and an owner that withdraws its
 *   request (unlinks it) either wins that race, and nothing is ever applied, or sees the claim.
 *
 * The rules that keep every write exactly once:
 * - A holder claims, applies and writes the receipt inside its transaction, and forgets its
 *   claims when the transaction ends: it never applies a claim in a later transaction.
 * - So, for an owner that holds the lock, the receipts table is the whole truth: a receipt means
 *   applied; no receipt means never applied, and no one can apply it any more (a claim left
 *   behind is from a transaction that rolled back or a holder that died).
 * - An owner that does not hold the lock trusts only a receipt. Giving up at its deadline, it
 *   unlinks its request; if a holder claimed it first, it waits for the outcome instead of
 *   reporting that nothing was written.
 */
export class SharedCommits {
  readonly #turns: HandoffQueue;
  readonly #conn: DatabaseConnection;
  readonly #owner = randomUUID();
  readonly #kinds = new Map<string, SharedApply>();
  #seq = 0;
  #acked = 0;
  #tableReady = false;
  #servedSincePrune = 0;
  #posted: { seq: number; count: number; reqPath: string; claimPath: string } | undefined;
  /** Writes of this process committed by another process's transaction. */
  sharedWrites = 0;
  /** Writes of other processes committed in this process's transactions. */
  servedWrites = 0;

  constructor(turns: HandoffQueue, conn: DatabaseConnection) {
    this.#turns = turns;
    this.#conn = conn;
    // Files a previous owner of this slot left behind (it died: its slot was free).
    try {
      const mine = new RegExp(`^(req|claim)-${turns.slot}-|^post-${turns.slot}\\.tmp$`);
      for (const name of readdirSync(turns.dir)) if (mine.test(name)) unlinkQuietly(`${turns.dir}/${name}`);
    } catch {
      // nothing to clean, or not readable: stale files are ignored anyway
    }
  }

  /** Lets writes whose merge key is `key` be posted, and applies other processes' with `apply`. */
  register(key: string, apply: SharedApply): void {
    this.#kinds.set(key, apply);
  }

  handles(key: string): boolean {
    return this.#kinds.has(key);
  }

  /** How many writes this process has posted and not yet settled, or `undefined` (none). */
  get postedCount(): number | undefined {
    return this.#posted?.count;
  }

  #paths(slot: number, owner: number, seq: number): { reqPath: string; claimPath: string } {
    const name = `${slot}-${owner.toString(16)}-${seq}`;
    const dir = this.#turns.dir;
    return { reqPath: `${dir}/req-${name}`, claimPath: `${dir}/claim-${name}` };
  }

  /**
   * Posts `items` (writes of kind `key`, in call order) for the lock holder to apply; it must not
   * apply them after `validForMs`. Returns false if the request could not be written (the writes
   * then just wait for the lock).
   */
  post(key: string, items: readonly unknown[], validForMs: number): boolean {
    if (this.#posted !== undefined || items.length === 0 || !this.#kinds.has(key)) return false;
    const seq = this.#seq + 1;
    const body: RequestBody = {
      v: 1,
      owner: this.#owner,
      pid: process.pid,
      seq,
      ack: this.#acked,
      key,
      items: [...items],
      notAfter: monotonicMs() + validForMs,
    };
    const paths = this.#paths(this.#turns.slot, this.#turns.owner, seq);
    const temp = `${this.#turns.dir}/post-${this.#turns.slot}.tmp`;
    try {
      writeFileSync(temp, JSON.stringify(body), { mode: 0o600 });
      renameSync(temp, paths.reqPath);
    } catch {
      return false;
    }
    this.#seq = seq;
    this.#posted = { seq, count: items.length, ...paths };
    this.#turns.setPosted(seq);
    return true;
  }

  /** Outside the lock: the receipt of the posted request, if a holder has committed it. */
  check(): Receipt | undefined {
    const posted = this.#posted;
    if (posted === undefined) return undefined;
    const receipt = this.#receipt(posted.seq, posted.count);
    if (receipt !== undefined) this.#done(posted, true);
    return receipt;
  }

  /**
   * Inside this process's write transaction: the receipt of the posted request, or `withdrawn`
   * when none was committed; the request is then gone for good and the caller writes it itself.
   */
  settleInLock(): Receipt | "withdrawn" {
    const posted = this.#posted;
    if (posted === undefined) return "withdrawn";
    const receipt = this.#receipt(posted.seq, posted.count);
    this.#done(posted, receipt !== undefined);
    if (receipt !== undefined) return receipt;
    unlinkQuietly(posted.reqPath);
    return "withdrawn";
  }

  /**
   * Outside the lock, at the deadline: takes the request back. True when it was withdrawn before
   * any holder claimed it (nothing of it is ever written); false when a holder claimed it, and
   * its receipt (or, once this process holds the lock, the lack of one) decides.
   */
  withdraw(): boolean {
    const posted = this.#posted;
    if (posted === undefined) return true;
    try {
      unlinkSync(posted.reqPath);
    } catch {
      return false;
    }
    this.#posted = undefined;
    this.#turns.setPosted(0);
    return true;
  }

  /** Drops the posted request without a verdict (a damaged store refusing its writes). */
  forget(): void {
    if (this.#posted === undefined) return;
    this.#posted = undefined;
    this.#turns.setPosted(0);
  }

  #done(posted: { seq: number; claimPath: string }, acknowledged: boolean): void {
    if (acknowledged) this.#acked = posted.seq;
    this.#posted = undefined;
    this.#turns.setPosted(0);
    // A holder that died after COMMIT leaves its claim; one without a receipt is dead too.
    unlinkQuietly(posted.claimPath);
  }

  #receipt(seq: number, count: number): Receipt | undefined {
    let row: { result: string } | undefined;
    try {
      row = this.#conn
        .statement(`SELECT result FROM ${RECEIPTS_TABLE} WHERE owner = ? AND seq = ?`)
        .get(this.#owner, seq) as { result: string } | undefined;
    } catch {
      return undefined; // no holder has created the table yet
    }
    if (row === undefined) return undefined;
    const parsed = JSON.parse(row.result) as { values?: unknown[] };
    if (Array.isArray(parsed.values) && parsed.values.length === count) {
      return { applied: true, values: parsed.values };
    }
    return { applied: false, count };
  }

  /**
   * Inside this process's write transaction, after its own writes: claims the requests other
   * processes posted, up to about `limit` items, and applies them with one statement per kind
   * (one FTS flush for all), each with its receipt. If that statement fails, each request is
   * applied alone in a savepoint, and one that fails is declined (its receipt says so; its owner
   * writes it itself and meets its own error). `lost`: SQLite rolled back the whole transaction,
   * and every claim is void.
   */
  serve(limit: number): { claimed: ClaimedRequest[]; lost: boolean } {
    const claimed: ClaimedRequest[] = [];
    const posted = this.#turns.postedRequests();
    if (posted.length === 0) return { claimed, lost: false };
    const taken: Array<{ slot: number; claimPath: string; body: RequestBody }> = [];
    let items = 0;
    for (const p of posted) {
      if (items >= limit) break;
      const { reqPath, claimPath } = this.#paths(p.slot, p.owner, p.seq);
      try {
        renameSync(reqPath, claimPath);
      } catch {
        continue; // withdrawn, already served, or not yet in place
      }
      let body: RequestBody | undefined;
      try {
        body = parseRequest(readFileSync(claimPath, "utf8"), p.pid, p.seq);
      } catch {
        body = undefined;
      }
      if (body === undefined || !this.#kinds.has(body.key) || monotonicMs() > body.notAfter) {
        // Unreadable (a stale or foreign file) or too late: left unapplied, without a receipt.
        // Its owner, once it holds the lock, finds none and writes its request itself.
        unlinkQuietly(claimPath);
        if (body !== undefined) this.#turns.wake(p.slot);
        continue;
      }
      taken.push({ slot: p.slot, claimPath, body });
      items += body.items.length;
    }
    if (taken.length === 0) return { claimed, lost: false };
    const conn = this.#conn;
    try {
      if (!this.#tableReady) conn.db.exec(CREATE_RECEIPTS);
    } catch {
      if (!conn.inTransaction) return { claimed, lost: true };
      this.abandoned(taken);
      for (const t of taken) unlinkQuietly(t.claimPath);
      return { claimed, lost: false };
    }
    // All requests of one kind in one statement; per request only if that fails.
    const results = new Map<RequestBody, readonly unknown[] | undefined>();
    for (const [key, group] of groupByKey(taken)) {
      const all = this.#applyInSavepoint(
        key,
        group.flatMap((t) => t.body.items),
      );
      if (all === "lost") return { claimed, lost: true };
      if (all !== undefined) {
        let at = 0;
        for (const t of group) {
          results.set(t.body, all.slice(at, at + t.body.items.length));
          at += t.body.items.length;
        }
        continue;
      }
      for (const t of group) {
        const values = this.#applyInSavepoint(key, t.body.items);
        if (values === "lost") return { claimed, lost: true };
        results.set(t.body, values);
      }
    }
    try {
      const now = Date.now() / 1000;
      for (const t of taken) {
        const values = results.get(t.body);
        const result = JSON.stringify(values === undefined ? { declined: true } : { values });
        conn
          .statement(`INSERT INTO ${RECEIPTS_TABLE} (owner, seq, result, written_at) VALUES (?, ?, ?, ?)`)
          .run(t.body.owner, t.body.seq, result, now);
        if (t.body.ack > 0) {
          conn
            .statement(`DELETE FROM ${RECEIPTS_TABLE} WHERE owner = ? AND seq <= ?`)
            .run(t.body.owner, Math.min(t.body.ack, t.body.seq - 1));
        }
        claimed.push({ slot: t.slot, claimPath: t.claimPath, applied: values?.length ?? 0 });
      }
      this.#servedSincePrune += taken.length;
      if (this.#servedSincePrune >= PRUNE_EVERY) {
        this.#servedSincePrune = 0;
        conn.statement(`DELETE FROM ${RECEIPTS_TABLE} WHERE written_at < ?`).run(now - RECEIPT_MAX_AGE_S);
      }
    } catch {
      // A receipt could not be written: the whole transaction must go, or an owner would take
      // rows that are in as never written.
      return {
        claimed: taken.map((t) => ({ slot: t.slot, claimPath: t.claimPath, applied: 0 })),
        lost: true,
      };
    }
    return { claimed, lost: false };
  }

  /**
   * Applies `items` of kind `key` in a savepoint: their values, `undefined` when it failed and
   * was rolled back (the transaction goes on), or `lost` when the whole transaction was.
   */
  #applyInSavepoint(key: string, items: readonly unknown[]): readonly unknown[] | undefined | "lost" {
    const conn = this.#conn;
    const apply = this.#kinds.get(key) as SharedApply;
    try {
      conn.statement("SAVEPOINT hermes_shared").run();
    } catch {
      return conn.inTransaction ? undefined : "lost";
    }
    try {
      const values = apply(items);
      if (values.length !== items.length) throw new Error("wrong number of results");
      conn.statement("RELEASE hermes_shared").run();
      return values;
    } catch {
      if (!conn.inTransaction) return "lost";
      try {
        conn.statement("ROLLBACK TO hermes_shared").run();
        conn.statement("RELEASE hermes_shared").run();
      } catch {
        return "lost";
      }
      return undefined;
    }
  }

  /** After the holder's COMMIT: the receipts are durable; wake their owners. */
  committed(claimed: readonly ClaimedRequest[]): void {
    if (claimed.length === 0) return;
    this.#tableReady = true;
    // The owners unlink their claims when they read their receipts: nothing more to do here
    // while the woken processes compete for the CPU.
    for (const c of claimed) {
      this.servedWrites += c.applied;
      this.#turns.wake(c.slot);
    }
  }

  /**
   * The holder's transaction did not commit: its claims are void (their owners find no receipt
   * once they hold the lock, and write their requests themselves). Wake them so they try.
   */
  abandoned(claimed: ReadonlyArray<{ readonly slot: number }>): void {
    for (const c of claimed) this.#turns.wake(c.slot);
  }
}

function groupByKey<T extends { body: RequestBody }>(taken: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const t of taken) {
    const group = groups.get(t.body.key);
    if (group === undefined) groups.set(t.body.key, [t]);
    else group.push(t);
  }
  return groups;
}

function parseRequest(text: string, pid: number, seq: number): RequestBody | undefined {
  const body = JSON.parse(text) as Partial<RequestBody>;
  if (
    body.v !== 1 ||
    typeof body.owner !== "string" ||
    body.pid !== pid ||
    body.seq !== seq ||
    typeof body.ack !== "number" ||
    typeof body.key !== "string" ||
    !Array.isArray(body.items) ||
    typeof body.notAfter !== "number"
  ) {
    return undefined;
  }
  return body as RequestBody;
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
