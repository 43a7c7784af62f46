/** What the server offers that a migration step may use. */
export interface PgServerFeatures {
  /** The RUM access method is installed in the database (index-ordered ranking). */
  readonly rum: boolean;
}

/** One versioned migration step of the PostgreSQL schema. */
export interface PgMigration {
  readonly version: number;
  readonly name: string;
  /** Statements, or statements for the server's features (RUM or GIN). */
  readonly sql: readonly string[] | ((features: PgServerFeatures) => readonly string[]);
}

/** The statements of `step` on a server with `features`. */
export function migrationStatements(step: PgMigration, features: PgServerFeatures): readonly string[] {
  return typeof step.sql === "function" ? step.sql(features) : step.sql;
}
