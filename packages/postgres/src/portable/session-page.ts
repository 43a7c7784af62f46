import {
  finishSessionPage,
  type SessionPage,
  type SessionPageOptions,
  type SessionPageRow,
  sessionPageArguments,
} from "@hermes/core";
import { sql } from "kysely";
import type { PgStoreContext } from "../pg-store-context.js";

// The SQLite store's `listSessionPage` in PostgreSQL's dialect (see packages/store
// portable/session-page.ts for what is listed and in which order): ids sort bytewise
// (COLLATE "C"), as SQLite's BINARY collation does.
const top = (s: string) =>
  sql.raw(`(${s}.parent_session_id IS NULL
    OR NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = ${s}.parent_session_id)
    OR EXISTS (SELECT 1 FROM sessions p WHERE p.id = ${s}.parent_session_id
      AND p.end_reason = 'branched' AND ${s}.started_at >= p.ended_at))`);

const lastActive = (s: string) =>
  sql.raw(
    `COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = ${s}.id), ${s}.started_at)`,
  );

/** One page of sessions, most recently active chain first (`listSessionPage` of `SessionStore`). */
export async function listSessionPage(ctx: PgStoreContext, o?: SessionPageOptions): Promise<SessionPage> {
  const a = sessionPageArguments(o);
  return ctx.read((db) => sessionPage(db, a));
}

async function sessionPage(
  db: PgStoreContext["db"],
  a: ReturnType<typeof sessionPageArguments>,
): Promise<SessionPage> {
  const after = a.after;
  const cursor =
    after === null
      ? sql`TRUE`
      : sql`(chain_last_active < ${after.key} OR (chain_last_active = ${after.key} AND (started_at < ${after.startedAt}
          OR (started_at = ${after.startedAt} AND id COLLATE "C" < ${after.id} COLLATE "C"))))`;
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
        AND (${a.sources}::text[] IS NULL OR s.source = ANY(${a.sources}::text[]))
        AND (${a.models}::text[] IS NULL OR s.model = ANY(${a.models}::text[]))
        AND (${a.startedAfter}::double precision IS NULL OR s.started_at >= ${a.startedAfter})
        AND (${a.startedBefore}::double precision IS NULL OR s.started_at < ${a.startedBefore})
        AND (${a.titlePattern}::text IS NULL OR lower(s.title) LIKE ${a.titlePattern} ESCAPE '\\'
          OR s.id LIKE ${a.idPattern} ESCAPE '\\')
    ),
    page AS (
      SELECT * FROM keyed WHERE ${cursor}
      ORDER BY chain_last_active DESC, started_at DESC, id COLLATE "C" DESC
      LIMIT ${a.limit + 1}
    )
    SELECT s.*, page.own_last_active AS last_active,
      COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, E'\\n', ' '), E'\\r', ' '), 1, 63) FROM messages m
        WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
        ORDER BY m.timestamp, m.id LIMIT 1), '') AS preview,
      page.chain_last_active, page.chain_sessions, page.chain_open
    FROM page JOIN sessions s ON s.id = page.id
    ORDER BY page.chain_last_active DESC, page.started_at DESC, page.id COLLATE "C" DESC`.execute(db);
  return finishSessionPage(result.rows, a.limit);
}
