import { InvalidArgumentError } from "../errors/hermes-store-error.js";
import type { SearchMessagesOptions } from "../types.js";
import { nonNegativeInt, optionalStringArray, optionsObject } from "../validation/arguments.js";

/**
 * Caps on what one search may ask for, on every backend. A query past them is refused
 * (`INVALID_ARGUMENT`) rather than run: every term costs an index lookup, every hit a context
 * query.
 */
export const SEARCH_LIMITS = {
  /** Longest query, in characters (UTF-16 code units), before any processing. */
  maxQueryLength: 4_000,
  /** Most terms (words or phrases) one query may combine, counted by the backend's planner. */
  maxTerms: 64,
  /** Largest `limit` (hits per page). */
  maxLimit: 1_000,
} as const;

/** The checked arguments of `searchMessages` (filters `null` when absent). */
export interface SearchArguments {
  readonly query: string;
  readonly sourceFilter: string[] | null;
  readonly excludeSources: string[] | null;
  readonly roleFilter: string[] | null;
  readonly limit: number;
  readonly offset: number;
}

/**
 * Checks the arguments of `searchMessages`: `INVALID_ARGUMENT` for a query that is not a string
 * or is longer than `SEARCH_LIMITS.maxQueryLength`, and for bad options (`limit` default 20, at
 * most `SEARCH_LIMITS.maxLimit`). The term count is checked once the backend has planned the
 * query (`planSearchWithinLimits` of `@hermes/search`).
 */
export function searchArguments(query: unknown, o: SearchMessagesOptions | undefined): SearchArguments {
  if (typeof query !== "string") {
    throw new InvalidArgumentError("query", "query must be a string");
  }
  const opts = optionsObject("options", o);
  const sourceFilter = optionalStringArray("sourceFilter", opts.sourceFilter);
  const excludeSources = optionalStringArray("excludeSources", opts.excludeSources);
  const roleFilter = optionalStringArray("roleFilter", opts.roleFilter);
  const limit = nonNegativeInt("limit", opts.limit, 20, SEARCH_LIMITS.maxLimit);
  const offset = nonNegativeInt("offset", opts.offset, 0);
  if (query.length > SEARCH_LIMITS.maxQueryLength) {
    throw new InvalidArgumentError(
      "query",
      `query is too long (${query.length} characters, max ${SEARCH_LIMITS.maxQueryLength})`,
    );
  }
  return { query, sourceFilter, excludeSources, roleFilter, limit, offset };
}
