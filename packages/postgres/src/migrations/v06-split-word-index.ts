import { WORD_INDEX_LAYOUT_SQL, WORD_RANGES_TABLE_SQL } from "../search/word-ranges.js";
import type { PgMigration } from "./pg-migration.js";

/**
 * v6: the word index split by id range where RUM is installed (see `search/word-ranges.ts`):
 * sealed ranges on RUM indexes that take no inserts, the newest messages on a GIN index. The
 * upgrade lays it out from the table in its transaction: one RUM index of every message so far
 * (appends wait for it: minutes on 1,000,000 messages; reads go on with the old index), an
 * empty open range, then the old RUM index of every row is dropped. Without RUM: the registry
 * only (empty: the GIN index stays as it is).
 */
export const v06SplitWordIndex: PgMigration = {
  version: 6,
  name: "search: the word index split by id range (RUM indexes of sealed ranges take no inserts, GIN for the newest)",
  sql: (features) => [...WORD_RANGES_TABLE_SQL, ...(features.rum ? [WORD_INDEX_LAYOUT_SQL] : [])],
};
