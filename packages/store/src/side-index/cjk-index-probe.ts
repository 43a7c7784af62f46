import type { SideIndexStatus } from "@hermes/core";
import type { SqlExecutor } from "@hermes/schema";
import {
  CJK_QUEUE_TABLE,
  CJK_STATE_TABLE,
  cjkBackfillState,
  cjkIndexNeedsUpgrade,
  cjkIndexPresence,
  timestampBlocksFill,
} from "@hermes/search";

/** What a look at the file tells of the short-CJK index: where it stands and what is left. */
export interface CjkIndexProbe {
  /** Its state, counts and queue (the part of `SideIndexStatus` the file tells). */
  readonly status: Pick<SideIndexStatus, "state" | "indexedRows" | "totalRows" | "pendingChanges">;
  /**
   * Work left before a search may use it, in messages (ids to index or to cover with timestamp
   * blocks, plus queued changes, plus one to create or upgrade it); 0 exactly when it is current.
   */
  readonly work: number;
}

/**
 * Looks at the short-CJK index without writing and without reading `messages` beyond its
 * largest id: a handful of small queries (well under a millisecond), so `stats()` may run it on
 * the caller's thread. The queue's length is taken from its row numbers: triggers append in
 * order and catch-ups remove the oldest first, so the rows are contiguous.
 */
export function probeCjkIndex(db: SqlExecutor): CjkIndexProbe {
  const lastId = db.get<{ hi: number | null }>("SELECT MAX(id) AS hi FROM messages")?.hi ?? 0;
  const presence = cjkIndexPresence(db);
  if (presence !== "present") {
    // Absent, or damaged (some objects missing, re-created by the next build): all to do,
    // creating it included (so even an empty file has work: 1).
    return {
      status: {
        state: presence === "absent" ? "absent" : "building",
        indexedRows: 0,
        totalRows: lastId,
        pendingChanges: 0,
      },
      work: lastId + 1,
    };
  }
  const queue = db.get<{ n: number | null }>(
    `SELECT MAX(rowid) - MIN(rowid) + 1 AS n FROM ${CJK_QUEUE_TABLE}`,
  )?.n;
  const pendingChanges = queue ?? 0;
  const backfill = cjkBackfillState(db);
  const fill = timestampBlocksFill(db, CJK_STATE_TABLE);
  if (backfill === null || cjkIndexNeedsUpgrade(db) || fill === null) {
    // A version's index without the timestamp blocks (or a trigger of another text): its
    // upgrade covers every message again.
    return {
      status: { state: "building", indexedRows: 0, totalRows: lastId, pendingChanges },
      work: lastId + 1 + pendingChanges,
    };
  }
  const postingsLeft = Math.max(0, backfill.end - backfill.next);
  const blocksLeft = Math.max(0, fill.end - fill.next);
  if (postingsLeft === 0 && blocksLeft === 0) {
    return {
      status: { state: "ready", indexedRows: lastId, totalRows: lastId, pendingChanges },
      work: pendingChanges,
    };
  }
  // Ids up to both cursors are covered; later ones come through the queue once both finish.
  const covered = Math.min(backfill.next, blocksLeft > 0 ? fill.next : backfill.next);
  return {
    status: {
      state: "building",
      indexedRows: Math.min(covered, lastId),
      totalRows: lastId,
      pendingChanges,
    },
    work: postingsLeft + blocksLeft + pendingChanges,
  };
}
