export { PG_MIGRATIONS, PG_SCHEMA_VERSION, type PgMigrationReport } from "./pg-schema.js";
export {
  type OpenPostgresSessionStoreOptions,
  openPostgresSessionStore,
  PostgresSessionStore,
} from "./postgres-session-store.js";
export {
  searchTokenCount,
  searchTrigramCount,
  searchVectorLiteral,
  tsqueryLiteral,
  wordTokens,
} from "./search/pg-search-text.js";
