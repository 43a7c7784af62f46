import type { SessionPageArguments } from "@hermes/core";
import { type RawBuilder, sql } from "kysely";

// SQL shared by the ways of reading a sessions page (session-page.ts orders every session or
// every one a filter keeps, session-page-by-bounds.ts only the chains of the newest activity),
// as in the SQLite store's portable/session-page-sql.ts: ids sort bytewise (COLLATE "C"), as
// SQLite's BINARY collation does.

/**
 * A session is listed on its own ("top") unless it continues its parent: a compression
 * continuation or a sub-agent run is listed under the chain it belongs to. Branches (the parent
 * ended as 'branched' before the child began) and orphans (the parent row is gone) are top.
 */
export const top = (s: string) =>
  sql.raw(`(${s}.parent_session_id IS NULL
    OR NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = ${s}.parent_session_id)
    OR EXISTS (SELECT 1 FROM sessions p WHERE p.id = ${s}.parent_session_id
      AND p.end_reason = 'branched' AND ${s}.started_at >= p.ended_at))`);

/** A session's own last activity: its newest message, else its start. */
export const lastActive = (s: string) =>
  sql.raw(
    `COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = ${s}.id), ${s}.started_at)`,
  );

/** Rows of `keyed` strictly after the cursor, in the page's order. */
export function afterCursor(a: SessionPageArguments): RawBuilder<unknown> {
  const after = a.after;
  return after === null
    ? sql`TRUE`
    : sql`(chain_last_active < ${after.key} OR (chain_last_active = ${after.key} AND (started_at < ${after.startedAt}
          OR (started_at = ${after.startedAt} AND id COLLATE "C" < ${after.id} COLLATE "C"))))`;
}

/** The columns of a page's row, from `page` (of `keyed`) joined to `sessions s`. */
export const PAGE_COLUMNS = sql`s.*, page.own_last_active AS last_active,
      COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, E'\\n', ' '), E'\\r', ' '), 1, 63) FROM messages m
        WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
        ORDER BY m.timestamp, m.id LIMIT 1), '') AS preview,
      page.chain_last_active, page.chain_sessions, page.chain_open`;

/** The page's order. */
export const PAGE_ORDER = sql`page.chain_last_active DESC, page.started_at DESC, page.id COLLATE "C" DESC`;
