import type { SearchPlan } from "./query/plan-search.js";

/**
 * Caps on what one search may ask for. A query past them is refused (`INVALID_ARGUMENT` in the
 * store) rather than run: every term costs an index lookup, every hit a context query.
 */
export const SEARCH_LIMITS = {
  /** Longest query, in characters (UTF-16 code units), before any processing. */
  maxQueryLength: 4_000,
  /** Most terms (words or phrases) one query may combine. */
  maxTerms: 64,
  /** Largest `limit` (hits per page). */
  maxLimit: 1_000,
} as const;

/**
 * Why `query` cannot be run, or `null` when it can: beyond {@link SEARCH_LIMITS}, or a query
 * that only excludes (`NOT docker`, which no index answers). `plan` is the query's plan (its
 * terms are counted after sanitizing: operators and punctuation-only words do not count).
 */
export function searchLimitViolation(query: string, plan: SearchPlan | null): string | null {
  if (query.length > SEARCH_LIMITS.maxQueryLength) {
    return `query is too long (${query.length} characters, max ${SEARCH_LIMITS.maxQueryLength})`;
  }
  if (plan !== null && plan.kind === "empty" && plan.negationOnly === true) {
    return (
      `query '${query}' only excludes: a NOT needs words to find before it ` +
      "(e.g. 'deploy NOT docker'; 'a OR NOT b' cannot be searched)"
    );
  }
  if (plan !== null && plan.kind !== "empty" && plan.terms.length > SEARCH_LIMITS.maxTerms) {
    return `query has too many terms (${plan.terms.length}, max ${SEARCH_LIMITS.maxTerms})`;
  }
  return null;
}
