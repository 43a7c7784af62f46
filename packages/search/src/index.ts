export { containsCjk, isCjkCodePoint } from "./cjk.js";
export {
  CJK_QUEUE_TABLE,
  CJK_STATE_TABLE,
  cjkBackfillState,
  cjkIndexNeedsUpgrade,
  cjkIndexPresence,
  cjkOrderUsable,
  cjkQueuedIds,
  dropCjkIndex,
} from "./cjk-index/cjk-index.js";
export { TIMESTAMP_BOUND_SQL, TS_BLOCK_SHIFT, timestampBlocksFill } from "./cjk-index/timestamp-blocks.js";
export { FTS_TABLE, FTS_TABLES, FTS_TRIGGERS, ftsTableScript, TRIGRAM_TABLE } from "./fts-ddl.js";
export { ftsMatchBound } from "./fts-match-bound.js";
export { likePattern } from "./like-pattern.js";
export { searchSchema } from "./migrations/search-schema.js";
export { newestMatchCandidates } from "./newest-first.js";
export { planSearchWithinLimits } from "./plan-search-within-limits.js";
export { compileFtsQuery, parseFtsQuery } from "./query/compile-fts-query.js";
export {
  parseCjkQuery,
  planSearch,
  type SearchPlan,
  withoutShortCjkIndex,
  withQueuedCjkRows,
} from "./query/plan-search.js";
export { positiveTerms, type QueryNode, queryTerms } from "./query/query-ast.js";
export { referenceSanitizeFts5Query } from "./reference-sanitize-fts5-query.js";
export {
  firstCodePoints,
  type RunSearchOptions,
  runSearch,
  type SearchContextMessage,
  type SearchHit,
  substringExcerpt,
} from "./run-search.js";
export { sanitizeFts5Query } from "./sanitize-fts5-query.js";
export {
  type CjkCatchUpOptions,
  catchUpCjkIndex,
  rebuildSearchIndexes,
  type SearchIndexProgress,
  type SearchIndexReport,
  type SearchIndexStatus,
  verifySearchIndexes,
} from "./search-index-maintenance.js";
export { SEARCH_LIMITS } from "./search-limits.js";
export {
  CONTEXT_SQL,
  likeSearchSql,
  newestFirstOrderSql,
  rankedSearchSql,
  type SearchFilters,
} from "./search-sql.js";
