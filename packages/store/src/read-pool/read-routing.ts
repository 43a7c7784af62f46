import { optionalSignal } from "@hermes/core";
import { planSearchWithinLimits } from "@hermes/search";

/**
 * An options object without its `signal` (which cannot cross to a worker), and the signal
 * (checked: `INVALID_ARGUMENT` when it is not an `AbortSignal`). Anything but an object with a
 * `signal` is returned as it is, for the operation's own checks.
 */
export function withoutSignal<T>(o: T): { signal: AbortSignal | undefined; rest: T } {
  if (typeof o !== "object" || o === null || !("signal" in o)) return { signal: undefined, rest: o };
  const { signal, ...rest } = o as T & { signal?: unknown };
  return { signal: optionalSignal(signal), rest: rest as T };
}

/**
 * Whether a search runs on the caller's thread even with a pool: one with short CJK terms first
 * brings the store's short-CJK index up to date, which writes (workers never write); a query
 * outside the limits, so that the in-thread path says why.
 */
export function searchInThread(query: string): boolean {
  try {
    const plan = planSearchWithinLimits(query);
    return plan.kind === "substring" && plan.usesCjkIndex;
  } catch {
    return true;
  }
}

/** A call whose arguments could not be copied to a worker (a function, a symbol in an option). */
export function isCloneError(error: unknown): boolean {
  return error instanceof Error && error.name === "DataCloneError";
}
