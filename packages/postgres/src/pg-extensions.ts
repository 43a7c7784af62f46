import { sql } from "kysely";
import type { PgDb } from "./pg-database.js";

/**
 * The extensions of the database (pg_trgm, RUM where it can be) made once: the migration lock
 * is per schema, and two stores on new schemas of one database both running `CREATE EXTENSION
 * IF NOT EXISTS` collide on its catalog row (a unique violation, or RUM silently left out).
 * When one is missing, a database-wide lock orders them: the second sees the first's.
 */
export async function createExtensions(db: PgDb): Promise<void> {
  const { rows } = await sql<{ missing: boolean }>`SELECT
      NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm')
      OR (EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'rum')
        AND NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'rum')) AS missing`.execute(db);
  if (rows[0]?.missing === true)
    await sql`SELECT pg_advisory_xact_lock(hashtext('hermes-sessions-extensions'))`.execute(db);
  // A session that does not take the lock (another tool) may create it at the same moment: the
  // loser's unique violation comes once the winner has committed, so a second try finds it.
  for (let attempt = 1; ; attempt++) {
    await sql`SAVEPOINT hermes_extensions`.execute(db);
    try {
      await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`.execute(db);
      await sql`RELEASE SAVEPOINT hermes_extensions`.execute(db);
      return;
    } catch (error) {
      await sql`ROLLBACK TO SAVEPOINT hermes_extensions`.execute(db);
      if (attempt === 2 || (error as { code?: string }).code !== "23505") throw error;
    }
  }
}

/**
 * Whether RUM is usable: installed in the database, or installable now (a superuser's
 * connection; the extension is not trusted). A failed `CREATE EXTENSION` is rolled back to a
 * savepoint, never an error: search then runs on GIN, unless another session made it meanwhile.
 */
export async function ensureRum(db: PgDb): Promise<boolean> {
  const count = async (query: ReturnType<typeof sql<{ n: number }>>) =>
    Number((await query.execute(db)).rows[0]?.n ?? 0);
  const installed = async () =>
    (await count(sql`SELECT count(*) AS n FROM pg_extension WHERE extname = 'rum'`)) > 0;
  if (await installed()) return true;
  if ((await count(sql`SELECT count(*) AS n FROM pg_available_extensions WHERE name = 'rum'`)) === 0)
    return false;
  await sql`SAVEPOINT hermes_rum`.execute(db);
  try {
    await sql`CREATE EXTENSION IF NOT EXISTS rum SCHEMA public`.execute(db);
    await sql`RELEASE SAVEPOINT hermes_rum`.execute(db);
    return true;
  } catch {
    await sql`ROLLBACK TO SAVEPOINT hermes_rum`.execute(db);
    // Lost a race to another session creating it (a unique violation once that one committed).
    return installed();
  }
}
