import { SEARCH_LIMITS } from "@hermes/core";
import type { SearchPlan } from "./query/plan-search.js";

// The caps are the session-store contract's (`@hermes/core`), re-exported here.
export { SEARCH_LIMITS };

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
