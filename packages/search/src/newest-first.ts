import type { SqlExecutor } from "@hermes/schema";
import { cjkBlocksComplete, cjkOrderUsable } from "./cjk-index/cjk-index.js";
import { TS_BLOCK_SHIFT } from "./cjk-index/timestamp-blocks.js";
import type { SearchIndexName } from "./query/plan-search.js";
import { filterSql, newestMatchIdsSql, newestProofSql, type SearchFilters } from "./search-sql.js";

/** Matches read in the first round, at least (then four per hit needed). */
const FIRST_READ = 64;
/** Each further round reads this many times more. */
const GROWTH = 8;
/** No read goes past this many candidates: the caller then sorts every match. */
const MAX_READ = 40_960;

/**
 * A set of matching ids that contains the first `need` hits of one index's `MATCH` in the
 * reference's newest-first order (`timestamp DESC`, ties as {@link newestFirstOrderSql}) under
 * `filters`; the caller orders the set and takes its page. `null` when no such set can be
 * proven cheaply: the caller then sorts every match.
 *
 * Why it is exact: read the newest matches by id (`ORDER BY rowid DESC LIMIT n`, cheap off
 * FTS5), down to id `last`. Every other match has an id below `last`, so a timestamp at most
 * the bound of the blocks up to `last - 1` (`hermes_search_ts_blocks`). A candidate with a
 * timestamp strictly above that bound ranks before every other match whatever the tie rule;
 * once `need` candidates (after filters) do, the first `need` hits are all candidates. Else
 * read eight times more. In a real file ids grow with time, so the first round proves it.
 *
 * Needs the short-CJK index caught up (`cjkOrderUsable`): the blocks must bound every message.
 * With `queued` (the ids its queue holds, `cjkQueuedIds`), the backfill and fill complete are
 * enough: the blocks bound every message not queued, and the queued ids, whose index entries
 * may be stale, are left out of the set; the caller adds the queued rows that match.
 * Run inside one read transaction, so the rounds see one snapshot.
 */
export function newestMatchCandidates(
  db: SqlExecutor,
  index: SearchIndexName,
  match: string,
  filters: SearchFilters,
  need: number,
  queued?: ReadonlySet<number>,
): number[] | null {
  if (queued === undefined ? !cjkOrderUsable(db) : !cjkBlocksComplete(db)) return null;
  const filterParams = filterSql(filters).params;
  for (let n = Math.max(FIRST_READ, 4 * need); n <= MAX_READ; n *= GROWTH) {
    const read = db.all<{ id: number }>(newestMatchIdsSql(index), [match, n]).map((r) => r.id);
    const ids = queued === undefined ? read : read.filter((id) => !queued.has(id));
    const last = read[read.length - 1];
    // Fewer than asked: every match is here.
    if (read.length < n || last === undefined) return ids;
    // Block of the highest id below `last` (`>>` in SQLite is a 64-bit arithmetic shift).
    const block = Math.floor((last - 1) / 2 ** TS_BLOCK_SHIFT);
    const proof = db.get<{ n: number }>(newestProofSql(filters), [
      block,
      block,
      block,
      JSON.stringify(ids),
      ...filterParams,
    ]);
    if ((proof?.n ?? 0) >= need) return ids;
  }
  return null;
}
