export {
  type OpenPostgresSessionStoreOptions,
  openPostgresSessionStore,
} from "./open-postgres-session-store.js";
export {
  migrationStatements,
  PG_MIGRATIONS,
  PG_SCHEMA_VERSION,
  type PgMigrationReport,
  type PgServerFeatures,
  RUM_MISSING,
} from "./pg-schema.js";
export { PostgresSessionStore } from "./postgres-session-store.js";
export {
  type SearchColumns,
  searchColumns,
  searchVectorLiteral,
  tsqueryLiteral,
  wordTokens,
} from "./search/pg-search-text.js";
export type { SealReport, SealStep } from "./search/seal-word-ranges.js";
export { WORD_INDEX_DEFAULTS, type WordIndexOptions } from "./search/word-index.js";
