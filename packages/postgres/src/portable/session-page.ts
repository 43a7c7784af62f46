import {
  finishSessionPage,
  type SessionPage,
  type SessionPageOptions,
  type SessionPageRow,
  sessionPageArguments,
} from "@hermes/core";
import { sql } from "kysely";
import type { PgStoreContext } from "../pg-store-context.js";
import { sessionReadRow } from "../table-columns.js";
import { sessionPageByBounds } from "./session-page-by-bounds.js";
import { afterCursor, lastActive, PAGE_COLUMNS, PAGE_ORDER, top } from "./session-page-sql.js";

// The SQLite store's `listSessionPage` in PostgreSQL's dialect (see packages/store
// portable/session-page.ts for what is listed and in which order). An unfiltered page is read
// from the newest activity when that proves it (session-page-by-bounds.ts); otherwise, and for
// filtered pages, every chain is ordered here.

/** One page of sessions, most recently active chain first (`listSessionPage` of `SessionStore`). */
export async function listSessionPage(ctx: PgStoreContext, o?: SessionPageOptions): Promise<SessionPage> {
  const a = sessionPageArguments(o);
  // JIT off: the recursive walks' work-table estimates put a round's cost past the JIT
  // thresholds, and compiling its ~170 expressions took 2-6 s of a 5 ms query (session-page.md).
  // SET LOCAL needs a transaction: one snapshot also gives every round the same data.
  return ctx.snapshot(async (db) => {
    await sql`SET LOCAL jit = off`.execute(db);
    // Flagged sessions (a newer agent's data) are left out: every chain is ordered then.
    const unlisted = await anyUnlisted(db);
    const rows = (unlisted ? null : await sessionPageByBounds(db, a)) ?? (await sessionPage(db, a));
    return finishSessionPage(rows.map(sessionReadRow), a.limit);
  });
}

/** Whether any session is archived or hidden (off `idx_sessions_unlisted`). */
async function anyUnlisted(db: PgStoreContext["db"]): Promise<boolean> {
  const r = await sql<{ any: boolean }>`SELECT EXISTS (
      SELECT 1 FROM sessions WHERE archived OR auto_archived OR hidden) AS any`.execute(db);
  return r.rows[0]?.any === true;
}

/** The page with every chain's activity computed and ordered (archived and hidden sessions left out). */
async function sessionPage(
  db: PgStoreContext["db"],
  a: ReturnType<typeof sessionPageArguments>,
): Promise<SessionPageRow[]> {
  const result = await sql<SessionPageRow>`WITH RECURSIVE edge AS MATERIALIZED (
      SELECT c.id, c.parent_session_id AS parent FROM sessions c
      WHERE c.parent_session_id IS NOT NULL AND NOT ${top("c")}
    ),
    up(id, root, depth) AS (
      SELECT id, parent, 1 FROM edge
      UNION
      SELECT u.id, e.parent, u.depth + 1 FROM up u JOIN edge e ON e.id = u.root WHERE u.depth < 100
    ),
    chain AS MATERIALIZED (
      SELECT u.root AS id, MAX(${lastActive("s")}) AS last_active, COUNT(*) AS n,
        bool_or(s.ended_at IS NULL) AS open
      FROM up u JOIN sessions s ON s.id = u.id WHERE u.root NOT IN (SELECT id FROM edge) GROUP BY u.root
    ),
    keyed AS (
      SELECT s.id, s.started_at, ${lastActive("s")} AS own_last_active,
        COALESCE(ch.n, 0) AS chain_sessions, (s.ended_at IS NULL OR COALESCE(ch.open, FALSE)) AS chain_open,
        GREATEST(${lastActive("s")}, ch.last_active) AS chain_last_active
      FROM sessions s LEFT JOIN chain ch ON ch.id = s.id
      WHERE s.id NOT IN (SELECT id FROM edge)
        AND s.archived IS NOT TRUE AND s.auto_archived IS NOT TRUE AND s.hidden IS NOT TRUE
        AND (${a.sources}::text[] IS NULL OR s.source = ANY(${a.sources}::text[]))
        AND (${a.models}::text[] IS NULL OR s.model = ANY(${a.models}::text[]))
        AND (${a.startedAfter}::double precision IS NULL OR s.started_at >= ${a.startedAfter})
        AND (${a.startedBefore}::double precision IS NULL OR s.started_at < ${a.startedBefore})
        AND (${a.titlePattern}::text IS NULL OR lower(s.title) LIKE ${a.titlePattern} ESCAPE '\\'
          OR s.id LIKE ${a.idPattern} ESCAPE '\\')
    ),
    page AS (
      SELECT * FROM keyed WHERE ${afterCursor(a)}
      ORDER BY chain_last_active DESC, started_at DESC, id COLLATE "C" DESC
      LIMIT ${a.limit + 1}
    )
    SELECT ${PAGE_COLUMNS}
    FROM page JOIN sessions s ON s.id = page.id
    ORDER BY ${PAGE_ORDER}`.execute(db);
  return result.rows;
}
