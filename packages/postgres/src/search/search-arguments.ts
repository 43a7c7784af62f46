import {
  searchArguments as checkedArguments,
  type SearchArguments,
  type SearchMessagesOptions,
} from "@hermes/core";
import { planSearchWithinLimits, type SearchPlan } from "@hermes/search";

/**
 * The checked arguments of `searchMessages` (`searchArguments` of `@hermes/core`) with the
 * query's plan (`planSearchWithinLimits` of `@hermes/search`, which refuses too many terms).
 */
export function searchArguments(
  query: unknown,
  o: SearchMessagesOptions | undefined,
): SearchArguments & { readonly plan: SearchPlan } {
  const args = checkedArguments(query, o);
  return { ...args, plan: planSearchWithinLimits(args.query) };
}
