import { trigramIndexPlpgsql } from "../search/word-ranges.js";
import type { PgMigration } from "./pg-migration.js";

/**
 * Each sealed range's pg_trgm index (`idx_messages_words_<lo>_<hi>_trgm`), made from the
 * registry, in place of the whole table's: built in bulk once, it takes no insert afterwards.
 */
const TRIGRAM_RANGES_SQL = `DO $trigrams$
DECLARE
  r record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM search_word_ranges) THEN
    RETURN;
  END IF;
  FOR r IN SELECT lo, hi FROM search_word_ranges WHERE hi IS NOT NULL LOOP
    ${trigramIndexPlpgsql("r.lo", "r.hi")}
  END LOOP;
  DROP INDEX IF EXISTS idx_messages_search_trgm;
END $trigrams$`;

/**
 * v9: with the split layout (RUM), pg_trgm's index is split like the word index. The open range
 * has none: an append no longer inserts its trigrams (over half of its WAL, ~0.1 ms of server
 * CPU); a substring query reads the open range's rows (at most `sealEvery` or so) off the
 * primary key. Seals build the new sealed range's trigram index next to its RUM one. The upgrade
 * builds every sealed range's in its transaction (appends wait for it: about as long as the
 * old index took to build; reads go on). Without RUM: nothing changes.
 */
export const v09TrigramRanges: PgMigration = {
  version: 9,
  name: "search: pg_trgm's index by sealed range (appends insert no trigrams)",
  sql: (features) => (features.rum ? [TRIGRAM_RANGES_SQL] : []),
};
