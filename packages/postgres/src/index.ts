export {
  type OpenPostgresSessionStoreOptions,
  openPostgresSessionStore,
} from "./open-postgres-session-store.js";
export { PG_MIGRATIONS, PG_SCHEMA_VERSION, type PgMigrationReport, RUM_MISSING } from "./pg-schema.js";
export { PostgresSessionStore } from "./postgres-session-store.js";
export { type SearchColumns, searchColumns } from "./search/pg-search-text.js";
export type { SealReport, SealStep } from "./search/seal-word-ranges.js";
export { WORD_INDEX_DEFAULTS, type WordIndexOptions } from "./search/word-index.js";
