/**
 * Reads the store answers on the caller's thread even when a worker is ready: those whose work is
 * bounded by the size of their answer, so a worker's round trip (posting, the worker's wake-up,
 * cloning the answer back: 0.1–0.8 ms) would cost more than the read itself (0.01–1 ms).
 *
 * - `getSession`, `getSessionTitle`, `getMeta`: one row by its key (an index lookup).
 * - `listSessionsRich`, first page only (no `offset`, `limit` ≤ 20) and unfiltered (no
 *   `source`, `excludeSources` or newer-agent flags, which could walk many sessions before 20
 *   match): an index walk of the newest sessions, one preview lookup per row.
 *
 * A guard backs the rule: each method keeps the time of its last in-thread answers, and once
 * their median exceeds {@link INLINE_BUDGET_MS} (a file where the "cheap" read is not cheap) that
 * method goes to the pool. The median ignores a one-off stall of a busy machine, but not a cold
 * start (the first answers read the file into an empty page cache) or a minute of heavy load,
 * so a demoted method is tried in-thread again after {@link RETRY_AFTER} calls, and after twice
 * as many each time it is found dear again.
 */
export const INLINE_BUDGET_MS = 2;

/** In-thread answers a method's median is taken over. */
const WINDOW = 8;

/** Calls a demoted method spends in the pool before its first retry in-thread. */
export const RETRY_AFTER = 256;

/** Retries stop doubling here (one retry window every 64 Ki calls at most). */
const MAX_RETRY_AFTER = 65_536;

const KEY_LOOKUPS: ReadonlySet<string> = new Set(["getSession", "getSessionTitle", "getMeta"]);

/** Options of `listSessionsRich` that keep it a first page of the newest sessions. */
const FIRST_PAGE_KEYS: ReadonlySet<string> = new Set([
  "limit",
  "offset",
  "includeChildren",
  "projectCompressionTips",
]);

function isFirstPage(o: unknown): boolean {
  if (o === undefined) return true;
  if (typeof o !== "object" || o === null) return false;
  for (const [key, value] of Object.entries(o)) {
    if (value === undefined) continue;
    if (!FIRST_PAGE_KEYS.has(key)) return false;
    if (key === "offset" && value !== 0) return false;
    if (key === "limit" && !(typeof value === "number" && value <= 20)) return false;
  }
  return true;
}

/** A method sent to the pool: pool calls left before its next in-thread try, and the next wait. */
interface Demotion {
  left: number;
  next: number;
}

export class InlineReads {
  readonly #recent = new Map<string, number[]>();
  readonly #demoted = new Map<string, Demotion>();
  /** The wait a method gets when it is next demoted (doubles while it stays dear). */
  readonly #backoff = new Map<string, number>();

  /**
   * Whether `method(...args)` is answered in-thread although a worker is ready. A call of a
   * demoted method counts toward its retry.
   */
  wants(method: string, args: readonly unknown[]): boolean {
    if (!(KEY_LOOKUPS.has(method) || (method === "listSessionsRich" && isFirstPage(args[0])))) return false;
    const demotion = this.#demoted.get(method);
    if (demotion === undefined) return true;
    if (demotion.left-- > 0) return false;
    // Retry: a fresh window of in-thread answers judges the method again.
    this.#demoted.delete(method);
    this.#backoff.set(method, demotion.next);
    this.#recent.delete(method);
    return true;
  }

  /** The time an in-thread answer of `method` took; demotes the method once its median is over budget. */
  note(method: string, ms: number): void {
    const times = this.#recent.get(method) ?? [];
    this.#recent.set(method, times);
    times.push(ms);
    if (times.length > WINDOW) times.shift();
    if (times.length < WINDOW) return;
    const sorted = [...times].sort((a, b) => a - b);
    if (sorted[WINDOW / 2]! <= INLINE_BUDGET_MS) {
      this.#backoff.delete(method); // cheap again: a later demotion starts from the first wait
      return;
    }
    const wait = this.#backoff.get(method) ?? RETRY_AFTER;
    this.#demoted.set(method, { left: wait, next: Math.min(wait * 2, MAX_RETRY_AFTER) });
    this.#recent.delete(method);
  }

  /** Methods sent to the pool (until their next retry) because their in-thread answers were not cheap. */
  get demoted(): ReadonlySet<string> {
    return new Set(this.#demoted.keys());
  }
}
