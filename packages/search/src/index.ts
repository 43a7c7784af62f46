export { CJK_RANGES, containsCjk, countCjk, isCjkCodePoint } from "./cjk.js";
export { cjkGramDocument, cjkGramToken } from "./cjk-index/cjk-grams.js";
export {
  backfillCjkChunk,
  CJK_INDEX_DDL,
  CJK_INDEX_TABLE,
  CJK_INDEX_TRIGGERS,
  CJK_QUEUE_TABLE,
  CJK_STATE_TABLE,
  type CjkBackfillState,
  type CjkIndexPresence,
  cjkBackfillState,
  cjkIndexNeedsUpgrade,
  cjkIndexPresence,
  cjkOrderUsable,
  cjkQueueDepth,
  cjkQueuePending,
  createCjkIndex,
  drainCjkQueue,
  dropCjkIndex,
} from "./cjk-index/cjk-index.js";
export {
  CJK_ORDER_TABLE,
  fillTimestampBlocksChunk,
  raiseTimestampBlocks,
  raiseTimestampBlocksOf,
  TIMESTAMP_BOUND_SQL,
  type TimestampBlocksFill,
  TS_BLOCK_SHIFT,
  TS_COARSE_SHIFT,
  timestampBlocksFill,
} from "./cjk-index/timestamp-blocks.js";
export { FTS_TABLE, FTS_TABLES, FTS_TRIGGERS, ftsTableScript, TRIGRAM_TABLE } from "./fts-ddl.js";
export {
  ensureFtsStep,
  searchSchema,
  v10TrigramStep,
  v11FtsReindexStep,
} from "./migrations/search-schema.js";
export { newestMatchCandidates } from "./newest-first.js";
export { planSearchWithinLimits } from "./plan-search-within-limits.js";
export {
  compileFtsQuery,
  ftsQueryTokens,
  ftsTerm,
  hasWordCharacter,
  lexFtsQuery,
  parseFtsQuery,
} from "./query/compile-fts-query.js";
export {
  cjkQueryTokens,
  lexCjkQuery,
  parseCjkQuery,
  planSearch,
  type RowSet,
  type SearchIndexName,
  type SearchPlan,
  withoutShortCjkIndex,
} from "./query/plan-search.js";
export {
  parseQueryTokens,
  positiveTerms,
  type QueryAnd,
  type QueryNode,
  type QueryNot,
  type QueryOperator,
  type QueryOr,
  type QueryTerm,
  type QueryToken,
  queryTerms,
  renderFts5,
  repairOperators,
} from "./query/query-ast.js";
export {
  pyStrip,
  referenceDropsLeadingNot,
  referenceSanitizeFts5Query,
} from "./reference-sanitize-fts5-query.js";
export {
  firstCodePoints,
  type RunSearchOptions,
  rowSetIds,
  runSearch,
  type SearchContextMessage,
  type SearchHit,
  searchContext,
  substringExcerpt,
} from "./run-search.js";
export { sanitizeFts5Query } from "./sanitize-fts5-query.js";
export {
  CJK_INDEX_CHUNK,
  type CjkCatchUpOptions,
  catchUpCjkIndex,
  rebuildSearchIndexes,
  type SearchIndexProgress,
  type SearchIndexReport,
  type SearchIndexStatus,
  TS_BLOCKS_CHUNK,
  verifySearchIndexes,
} from "./search-index-maintenance.js";
export { SEARCH_LIMITS, searchLimitViolation } from "./search-limits.js";
export {
  CONTEXT_SQL,
  filterSql,
  idListSearchSql,
  likeFilterSql,
  likePattern,
  likeSearchSql,
  matchAmongSql,
  matchRowsSql,
  newestFirstOrderSql,
  newestMatchIdsSql,
  newestProofSql,
  rankedSearchSql,
  type SearchFilters,
  scanRowsSql,
  substringSearchSql,
} from "./search-sql.js";
