import { InvalidArgumentError } from "@hermes/core";
import { planSearch, type SearchPlan } from "./query/plan-search.js";
import { searchLimitViolation } from "./search-limits.js";

/**
 * Plans a query whose arguments `searchArguments` of `@hermes/core` has checked, and refuses it
 * (`INVALID_ARGUMENT`) when it has more terms than `SEARCH_LIMITS.maxTerms`: terms are counted
 * after sanitizing, so operators and punctuation-only words do not count. An `empty` plan finds
 * nothing.
 *
 * @example
 * const args = searchArguments(query, options);      // @hermes/core
 * const plan = planSearchWithinLimits(args.query);   // then run it on the backend
 */
export function planSearchWithinLimits(query: string): SearchPlan {
  const plan = planSearch(query);
  const violation = searchLimitViolation(query, plan);
  if (violation !== null) throw new InvalidArgumentError("query", violation);
  return plan;
}
