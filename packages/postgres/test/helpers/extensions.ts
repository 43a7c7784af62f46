import { randomBytes } from "node:crypto";
import { openPostgresSessionStore } from "@hermes/postgres";

/**
 * pg_trgm and, where the server has it, RUM in the database of `url`, made as a store's first
 * open makes them (ordered with other opens under way, unlike a bare `CREATE EXTENSION`).
 */
export async function ensureExtensions(url: string): Promise<void> {
  const store = await openPostgresSessionStore({
    connectionString: url,
    schema: `ext_${randomBytes(6).toString("hex")}`,
  });
  await store.close();
}
