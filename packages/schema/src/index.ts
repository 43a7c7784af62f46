export {
  CORE_INDEXES,
  CORE_TABLES,
  type CoreTableName,
  SCHEMA_VERSION,
  TITLE_INDEX_SQL,
} from "./core-ddl.js";
export { addColumnSql, DECLARED_COLUMNS, type DeclaredColumn } from "./declared-columns.js";
export { coreSchema } from "./migrations/core-schema.js";
export { objectExists, readSchemaVersion, tableColumns } from "./migrations/introspect.js";
export {
  composeChain,
  type EnsureStep,
  type MigrationChain,
  type MigrationContext,
  type MigrationProgress,
  type SchemaContribution,
  type VersionStep,
} from "./migrations/migration.js";
export {
  type MigrationReport,
  type RunMigrationsOptions,
  runMigrations,
  type TransactionRunner,
} from "./migrations/run-migrations.js";
export type { SqlExecutor } from "./sql-executor.js";
export type {
  HermesDatabase,
  MessageRow,
  MessagesTable,
  MessageUpdate,
  NewMessage,
  NewSession,
  SchemaVersionRow,
  SchemaVersionTable,
  SessionRow,
  SessionsTable,
  SessionUpdate,
  StateMetaRow,
  StateMetaTable,
} from "./tables.js";
