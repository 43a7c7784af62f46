import { isFilteredPage, type SessionPageArguments, type SessionPageRow } from "@hermes/core";
import { sql } from "kysely";
import type { PgDb } from "../pg-database.js";
import { afterCursor, lastActive, PAGE_COLUMNS, top } from "./session-page-sql.js";

/** Newest messages and sessions read in the first round, per row the page needs. */
const MESSAGES_PER_ROW = 24;
const SESSIONS_PER_ROW = 3;
/** Each further round reads this many times more. */
const GROWTH = 4;
/** No round reads past this many messages: the caller then orders every session. */
const MAX_MESSAGES = 65_536;

/** A row of a round: the page's row (absent when the page is empty), the bound, and whether the row is above it. */
type RoundRow = Partial<SessionPageRow> & {
  hermes_bound: number;
  hermes_above: boolean | null;
  hermes_started?: number;
};

/**
 * One round in one statement (one snapshot): the newest `n` messages (`idx_messages_timestamp`)
 * and `k` sessions (`idx_sessions_started`) at or below the cursor's activity name candidate
 * sessions; each climbs to the top of its chain (the full order's depth bound), each top session
 * gets its chain's figures walked down from it, and the candidates are ordered and paged as the
 * full order does. `hermes_bound`: the oldest activity read (`-Infinity` for a kind read to its
 * end); a row is `hermes_above` it when its chain's activity is strictly newer. The bound comes
 * on a row of its own when the page is empty.
 *
 * Every join on a walk's rows is a LATERAL probe of one session or one parent's children, fenced
 * (`LIMIT 1`, `OFFSET 0`) so it stays an index probe: the planner sizes a recursive work table
 * from guesses, and a join it plans from them hashes every continuation or scans every session.
 */
async function round(db: PgDb, a: SessionPageArguments, n: number, k: number): Promise<RoundRow[]> {
  const key = a.after?.key;
  const messagesBelow = key === undefined ? sql`` : sql`WHERE timestamp <= ${key}`;
  const sessionsBelow = key === undefined ? sql`` : sql`WHERE started_at <= ${key}`;
  const result = await sql<RoundRow>`WITH RECURSIVE newest_messages AS MATERIALIZED (
      SELECT session_id, timestamp FROM messages ${messagesBelow} ORDER BY timestamp DESC LIMIT ${n}
    ),
    newest_sessions AS MATERIALIZED (
      SELECT id, started_at FROM sessions ${sessionsBelow} ORDER BY started_at DESC LIMIT ${k}
    ),
    bound AS (
      SELECT GREATEST(
        CASE WHEN (SELECT count(*) FROM newest_messages) < ${n} THEN '-Infinity'::double precision
          ELSE (SELECT min(timestamp) FROM newest_messages) END,
        CASE WHEN (SELECT count(*) FROM newest_sessions) < ${k} THEN '-Infinity'::double precision
          ELSE (SELECT min(started_at) FROM newest_sessions) END) AS b
    ),
    climb(id, depth) AS (
      SELECT session_id, 0 FROM newest_messages
      UNION
      SELECT id, 0 FROM newest_sessions
      UNION
      SELECT up.parent, c.depth + 1 FROM climb c CROSS JOIN LATERAL (
        SELECT s.parent_session_id AS parent FROM sessions s
        WHERE s.id = c.id AND s.parent_session_id IS NOT NULL AND NOT ${top("s")} LIMIT 1
      ) up
      WHERE c.depth < 100
    ),
    listed AS MATERIALIZED (
      SELECT s.id, s.started_at, s.ended_at, ${lastActive("s")} AS own
      FROM (SELECT DISTINCT id FROM climb) c CROSS JOIN LATERAL (
        SELECT * FROM sessions s WHERE s.id = c.id AND ${top("s")} OFFSET 0
      ) s
    ),
    down(root, id, depth) AS (
      SELECT id, id, 0 FROM listed
      UNION ALL
      SELECT d.root, k.id, d.depth + 1 FROM down d CROSS JOIN LATERAL (
        SELECT c.id FROM sessions c WHERE c.parent_session_id = d.id AND NOT ${top("c")} OFFSET 0
      ) k
      WHERE d.depth < 100
    ),
    chain AS (
      SELECT d.root AS id, MAX(${lastActive("s")}) AS last_active, COUNT(*) AS n,
        bool_or(s.ended_at IS NULL) AS open
      FROM down d CROSS JOIN LATERAL (SELECT * FROM sessions s WHERE s.id = d.id OFFSET 0) s
      WHERE d.depth > 0 GROUP BY d.root
    ),
    keyed AS (
      SELECT l.id, l.started_at, l.own AS own_last_active, COALESCE(ch.n, 0) AS chain_sessions,
        (l.ended_at IS NULL OR COALESCE(ch.open, FALSE)) AS chain_open,
        GREATEST(l.own, ch.last_active) AS chain_last_active
      FROM listed l LEFT JOIN chain ch ON ch.id = l.id
    ),
    page AS (
      SELECT * FROM keyed WHERE ${afterCursor(a)}
      ORDER BY chain_last_active DESC, started_at DESC, id COLLATE "C" DESC
      LIMIT ${a.limit + 1}
    ),
    rows AS (
      SELECT ${PAGE_COLUMNS}, page.started_at AS hermes_started FROM page JOIN sessions s ON s.id = page.id
    )
    SELECT bound.b AS hermes_bound, rows.chain_last_active > bound.b AS hermes_above, rows.*
    FROM bound LEFT JOIN rows ON TRUE
    ORDER BY rows.chain_last_active DESC, rows.hermes_started DESC, rows.id COLLATE "C" DESC`.execute(db);
  return result.rows;
}

/**
 * The rows of an unfiltered sessions page (up to `limit + 1`, in order) found from the newest
 * activity alone, or `null` when that takes more than {@link MAX_MESSAGES} messages (the caller
 * then orders every chain).
 *
 * Why it is exact: a chain's activity is the newest of its sessions' own (newest message, else
 * start), and a chain after the cursor has all of it at or below the cursor's activity. Read the
 * newest `n` messages and `k` sessions down there; a chain none of whose sessions they name has
 * every message no newer than the last message read and, for its sessions without messages, a
 * start no later than the last session read. A named chain strictly newer than both ranks before
 * it whatever the tie rule, so once the page's `limit + 1` rows all are (or everything was read),
 * the page is proven. Else read four times more. Messages and sessions come off btree indexes in
 * activity order, so in a real history the first round proves it.
 */
export async function sessionPageByBounds(
  db: PgDb,
  a: SessionPageArguments,
): Promise<SessionPageRow[] | null> {
  if (isFilteredPage(a)) return null;
  const need = a.limit + 1;
  for (
    let n = MESSAGES_PER_ROW * need, k = SESSIONS_PER_ROW * need;
    n <= MAX_MESSAGES;
    n *= GROWTH, k *= GROWTH
  ) {
    const got = await round(db, a, n, k);
    const bound = got[0]?.hermes_bound ?? Number.POSITIVE_INFINITY;
    const rows = got.filter((r) => r.id !== null && r.id !== undefined);
    const proven =
      rows.every((r) => r.hermes_above === true) &&
      (rows.length === need || bound === Number.NEGATIVE_INFINITY);
    if (proven)
      return rows.map(
        ({ hermes_bound: _b, hermes_above: _a, hermes_started: _s, ...row }) => row as SessionPageRow,
      );
  }
  return null;
}
