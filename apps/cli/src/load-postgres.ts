import { CliError } from "./cli-error.js";

type PostgresModule = typeof import("@hermes/postgres");

/**
 * `@hermes/postgres`, loaded only for a `postgres://` database: it is an optional peer of the
 * CLI, so users who never use PostgreSQL install neither it nor `pg`. Missing, it is a
 * one-line error that says what to install.
 */
export async function loadPostgres(): Promise<PostgresModule> {
  try {
    return await import("@hermes/postgres");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ERR_MODULE_NOT_FOUND" && String((error as Error).message).includes("@hermes/postgres")) {
      throw new CliError(
        "A postgres:// database needs the PostgreSQL store: npm install @hermes/postgres " +
          "(beside @hermes/cli; with -g if the CLI is installed globally)",
        1,
        { cause: error },
      );
    }
    throw error;
  }
}
