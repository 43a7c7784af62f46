/**
 * Reads the store answers on the caller's thread even when a worker is ready: those whose work is
 * bounded by the size of their answer, so a worker's round trip (posting, the worker's wake-up,
 * cloning the answer back: 0.1–0.7 ms) would cost more than the read itself (0.01–0.5 ms).
 *
 * - `getSession`, `getSessionTitle`, `getMeta`: one row by its key (an index lookup).
 * - `listSessionsRich`, first page only (no `offset`, `limit` ≤ 20) and unfiltered (no
 *   `source`, `excludeSources` or newer-agent flags, which could walk many sessions before 20
 *   match): an index walk of the newest sessions, one preview lookup per row.
 *
 * A guard backs the rule: each method keeps the time of its last in-thread answers, and once
 * their median exceeds {@link INLINE_BUDGET_MS} (a file where the "cheap" read is not cheap) that
 * method goes to the pool for the rest of the store's life. The median ignores a one-off stall
 * of a busy machine.
 */
export const INLINE_BUDGET_MS = 1;

/** In-thread answers a method's median is taken over. */
const WINDOW = 8;

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

export class InlineReads {
  readonly #recent = new Map<string, number[]>();
  readonly #demoted = new Set<string>();

  /** Whether `method(...args)` is answered in-thread although a worker is ready. */
  wants(method: string, args: readonly unknown[]): boolean {
    if (this.#demoted.has(method)) return false;
    if (KEY_LOOKUPS.has(method)) return true;
    return method === "listSessionsRich" && isFirstPage(args[0]);
  }

  /** The time an in-thread answer of `method` took; demotes the method once its median is over budget. */
  note(method: string, ms: number): void {
    const times = this.#recent.get(method) ?? [];
    this.#recent.set(method, times);
    times.push(ms);
    if (times.length > WINDOW) times.shift();
    if (times.length < WINDOW) return;
    const sorted = [...times].sort((a, b) => a - b);
    if (sorted[WINDOW / 2]! > INLINE_BUDGET_MS) this.#demoted.add(method);
  }

  /** Methods sent to the pool for good because their in-thread answers were not cheap. */
  get demoted(): ReadonlySet<string> {
    return this.#demoted;
  }
}
