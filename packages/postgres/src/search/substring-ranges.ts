import { type RawBuilder, sql } from "kysely";
import { rangeCondition, type WordRange } from "./word-ranges.js";

/**
 * A substring query's condition `where` on `m`, read range by range on the split layout (v9):
 * each sealed range's matches through its own trigram index (its predicate stated), the open
 * range's (no trigram index: appends insert no trigrams) off the primary key, `id > lo`. The
 * ranges partition the ids, a stale set included, so each match is found once. (The GIN layout
 * has no ranges and one trigram index of the table: `where` needs no splitting there.)
 */
export function substringRangesCondition(
  where: RawBuilder<boolean>,
  ranges: readonly WordRange[],
): RawBuilder<boolean> {
  const parts = ranges.map((range) => {
    const bound = range.hi === null ? sql<boolean>`m.id > ${sql.lit(range.lo)}` : rangeCondition(range);
    return sql`SELECT m.id FROM messages m WHERE ${bound} AND ${where}`;
  });
  return sql<boolean>`m.id IN (${sql.join(parts, sql` UNION ALL `)})`;
}
