import { isFilteredPage, type SessionPageArguments, type SessionPageRow } from "@hermes/core";
import {
  CJK_QUEUE_TABLE,
  CJK_STATE_TABLE,
  cjkBackfillState,
  cjkIndexNeedsUpgrade,
  cjkIndexPresence,
  TIMESTAMP_BOUND_SQL,
  TS_BLOCK_SHIFT,
  timestampBlocksFill,
} from "@hermes/search";
import type { StoreContext } from "../store-context.js";
import {
  CHAIN_BELOW_SQL,
  lastActiveSql,
  PAGE_ROWS_FROM_SQL,
  PAGE_ROWS_SQL,
  pageFilterSql,
  topSql,
} from "./session-page-sql.js";

/** Newest messages and sessions read in the first round, per row the page needs. */
const MESSAGES_PER_ROW = 24;
const SESSIONS_PER_ROW = 3;
const QUEUED_PER_ROW = 4;
/** Each further round reads this many times more. */
const GROWTH = 4;
/** No round reads past this many messages: the caller then orders every session. */
const MAX_MESSAGES = 65_536;
const NEWEST_MESSAGES_SQL = "SELECT id, session_id FROM messages ORDER BY id DESC LIMIT ?";
const NEWEST_SESSIONS_SQL = "SELECT id, started_at FROM sessions ORDER BY started_at DESC LIMIT ?";
// Messages queued since the timestamp blocks were last raised (their timestamps may be above
// the blocks' bounds), below the newest ones read, newest first.
const QUEUED_MESSAGES_SQL = `SELECT m.session_id, m.timestamp FROM ${CJK_QUEUE_TABLE} q JOIN messages m ON m.id = q.message_id
  WHERE q.message_id < ? ORDER BY m.timestamp DESC LIMIT ?`;

// The candidates climb to the top session of their chain (the depth bound of the full order,
// so a corrupt cycle stays finite and reaches no top); each top session that passes the filters
// gets its chain's figures (walked down from it), then the page's order, cursor and limit.
// `above`: the chain's activity is above every bound, so no session left unread can rank before it.
const CANDIDATE_PAGE_SQL = `WITH RECURSIVE climb(id, depth) AS (
    SELECT value, 0 FROM json_each(:candidates)
    UNION
    SELECT s.parent_session_id, c.depth + 1 FROM climb c JOIN sessions s ON s.id = c.id
    WHERE c.depth < 100 AND s.parent_session_id IS NOT NULL AND NOT ${topSql("s")}
  ),
  listed AS MATERIALIZED (
    SELECT DISTINCT s.id, s.started_at, s.ended_at, ${lastActiveSql("s")} AS own
    FROM climb c CROSS JOIN sessions s ON s.id = c.id
    WHERE ${topSql("s")}${pageFilterSql("s")}
  ),
  ${CHAIN_BELOW_SQL}${PAGE_ROWS_SQL},
    page.chain_last_active > :message_bound AND page.chain_last_active > :queued_bound
      AND page.chain_last_active > :session_bound AS above${PAGE_ROWS_FROM_SQL}`;

/**
 * Whether the timestamp blocks of the search index bound every message not in its queue: the
 * index is built, of this version, its backfill and fill complete (the agent's own writes reach
 * the queue through the index's triggers, so this holds however the file was written since).
 */
function boundsUsable(ctx: StoreContext): boolean {
  const db = ctx.conn;
  if (cjkIndexPresence(db) !== "present" || cjkIndexNeedsUpgrade(db)) return false;
  const backfill = cjkBackfillState(db);
  if (backfill === null || backfill.next < backfill.end) return false;
  const fill = timestampBlocksFill(db, CJK_STATE_TABLE);
  return fill !== null && fill.next >= fill.end;
}

/**
 * The rows of a sessions page (up to `limit + 1`, in order) found from the newest activity
 * alone, or `null` when that cannot be proven cheaply (the caller then orders every session).
 *
 * Why it is exact: a chain's activity is the newest of its sessions' (newest message, else
 * start). Read the newest `n` messages by id, the newest `k` sessions by start, and the newest
 * `q` of the messages below those ids that are queued since the timestamp blocks were last
 * raised. Each session they name climbs to the top of its chain, whose figures are then computed
 * exactly. A chain none of whose sessions was named has messages only below the last id read:
 * queued ones no newer than the last queued one read, the others no newer than the blocks'
 * bound up to that id; and it starts no later than the last session read. A candidate strictly
 * above the three bounds ranks before it whatever the tie rule; once the page's rows all are,
 * the page is proven. Else read four times more. In a real file message ids and starts grow
 * with time, so the first round proves it.
 *
 * Runs inside the caller's read transaction (one snapshot for every round); unfiltered pages of
 * v11 files only.
 */
export function sessionPageByBounds(
  ctx: StoreContext,
  a: SessionPageArguments,
  params: Record<string, unknown>,
): SessionPageRow[] | null {
  if (isFilteredPage(a) || ctx.reads || !boundsUsable(ctx)) return null;
  const db = ctx.conn;
  const need = a.limit + 1;
  let sessionsRead = SESSIONS_PER_ROW * need;
  let queuedRead = QUEUED_PER_ROW * need;
  for (let n = MESSAGES_PER_ROW * need; n <= MAX_MESSAGES * GROWTH; n *= GROWTH) {
    const messagesRead = Math.min(n, MAX_MESSAGES);
    const messages = db.all<{ id: number; session_id: string }>(NEWEST_MESSAGES_SQL, [messagesRead]);
    const sessions = db.all<{ id: string; started_at: unknown }>(NEWEST_SESSIONS_SQL, [sessionsRead]);
    const lastMessage = messages.length < messagesRead ? undefined : messages[messages.length - 1];
    const lastSession = sessions.length < sessionsRead ? undefined : sessions[sessions.length - 1];
    const candidates = new Set<string>();
    for (const m of messages) candidates.add(m.session_id);
    for (const s of sessions) candidates.add(s.id);
    // Below the last message read: the bound of its block and the blocks before it covers every
    // message but the queued ones, which are read newest first down to a bound of their own.
    let messageBound: unknown = -Infinity;
    let queuedBound: unknown = -Infinity;
    if (lastMessage !== undefined) {
      const block = Math.floor((lastMessage.id - 1) / 2 ** TS_BLOCK_SHIFT);
      messageBound =
        db.get<{ bound: unknown }>(TIMESTAMP_BOUND_SQL, [block, block, block])?.bound ?? -Infinity;
      const queued = db.all<{ session_id: string; timestamp: unknown }>(QUEUED_MESSAGES_SQL, [
        lastMessage.id,
        queuedRead,
      ]);
      for (const m of queued) candidates.add(m.session_id);
      if (queued.length === queuedRead) queuedBound = queued[queued.length - 1]!.timestamp;
    }
    const rows = db.all<SessionPageRow & { above: number | null }>(CANDIDATE_PAGE_SQL, [
      {
        ...params,
        candidates: JSON.stringify([...candidates]),
        // -Infinity: everything of that kind was read.
        message_bound: messageBound,
        queued_bound: queuedBound,
        session_bound: lastSession === undefined ? -Infinity : lastSession.started_at,
      },
    ]);
    // The page's rows all rank before anything unread, or nothing is unread.
    const proven = rows.length === need && rows.every((r) => r.above === 1);
    if (proven || (lastMessage === undefined && lastSession === undefined)) {
      return rows.map(({ above: _, ...row }) => row);
    }
    if (messagesRead >= MAX_MESSAGES) return null;
    sessionsRead *= GROWTH;
    queuedRead *= GROWTH;
  }
  return null;
}
