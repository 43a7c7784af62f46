import {
  finishSessionPage,
  type SessionPage,
  type SessionPageOptions,
  type SessionPageRow,
  sessionPageArguments,
} from "@hermes/core";
import { SESSION_FLAGS_VIEW } from "../file-views.js";
import { readSnapshot } from "../read-snapshot.js";
import type { StoreContext } from "../store-context.js";

// A session is listed on its own ("top") unless it continues its parent: a compression
// continuation or a sub-agent run is listed under the chain it belongs to. Branches (the parent
// ended as 'branched' before the child began) and orphans (the parent row is gone) are top.
const top = (s: string) => `(${s}.parent_session_id IS NULL
    OR NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = ${s}.parent_session_id)
    OR EXISTS (SELECT 1 FROM sessions p WHERE p.id = ${s}.parent_session_id
      AND p.end_reason = 'branched' AND ${s}.started_at >= p.ended_at))`;

const lastActive = (s: string) =>
  `COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = ${s}.id), ${s}.started_at)`;

// `edge`: the sessions listed under their parent. `up` walks each one to the top session of its
// chain (UNION and the depth bound keep a corrupt cycle finite). Ordering every session by
// activity reads every session (about 0.2-0.4 s at 100,000 with 2 KB system prompts, whose
// overflow pages hold the later columns); the page's whole rows are read afterwards.
// A newer agent's file is read through views (no index to name), and its archived and hidden
// sessions are left out as its own listings leave them out.
const pageSql = (newerFile: boolean, flagged: boolean) => `WITH RECURSIVE edge AS MATERIALIZED (
    SELECT c.id, c.parent_session_id AS parent FROM sessions c${newerFile ? "" : " INDEXED BY idx_sessions_parent"}
    WHERE c.parent_session_id IS NOT NULL AND NOT ${top("c")}
  ),
  up(id, root, depth) AS (
    SELECT id, parent, 1 FROM edge
    UNION
    SELECT u.id, e.parent, u.depth + 1 FROM up u JOIN edge e ON e.id = u.root WHERE u.depth < 100
  ),
  chain AS MATERIALIZED (
    SELECT u.root AS id, MAX(${lastActive("s")}) AS last_active, COUNT(*) AS n, MAX(s.ended_at IS NULL) AS open
    FROM up u JOIN sessions s ON s.id = u.id WHERE u.root NOT IN (SELECT id FROM edge) GROUP BY u.root
  ),
  listed AS MATERIALIZED (
    SELECT s.id, s.started_at, s.ended_at, ${lastActive("s")} AS own FROM sessions s
    WHERE s.id NOT IN (SELECT id FROM edge)${flagged ? ` AND s.id NOT IN (SELECT id FROM ${SESSION_FLAGS_VIEW} WHERE archived != 0 OR hidden != 0)` : ""}
      AND (:sources IS NULL OR s.source IN (SELECT value FROM json_each(:sources)))
      AND (:models IS NULL OR s.model IN (SELECT value FROM json_each(:models)))
      AND (:started_after IS NULL OR s.started_at >= :started_after)
      AND (:started_before IS NULL OR s.started_at < :started_before)
      AND (:title_pattern IS NULL OR lower(s.title) LIKE :title_pattern ESCAPE '\\' OR s.id LIKE :id_pattern ESCAPE '\\')
  ),
  keyed AS (
    SELECT l.id, l.started_at, l.own, COALESCE(ch.n, 0) AS chain_sessions,
      (l.ended_at IS NULL OR COALESCE(ch.open, 0)) AS chain_open,
      MAX(l.own, COALESCE(ch.last_active, l.own)) AS chain_last_active
    FROM listed l LEFT JOIN chain ch ON ch.id = l.id
  ),
  page AS (
    SELECT * FROM keyed
    WHERE :after_key IS NULL OR chain_last_active < :after_key
      OR (chain_last_active = :after_key AND (started_at < :after_started
        OR (started_at = :after_started AND id < :after_id)))
    ORDER BY chain_last_active DESC, started_at DESC, id DESC
    LIMIT :limit
  )
  SELECT s.*, page.own AS last_active,
    COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, X'0A', ' '), X'0D', ' '), 1, 63) FROM messages m
      WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
      ORDER BY m.timestamp, m.id LIMIT 1), '') AS preview,
    page.chain_last_active, page.chain_sessions, page.chain_open
  FROM page JOIN sessions s ON s.id = page.id
  ORDER BY page.chain_last_active DESC, page.started_at DESC, page.id DESC`;
const PAGE_SQL = pageSql(false, false);

/**
 * A page of sessions for a browser: every session is reachable by following `nextCursor`
 * (keyset paging, stable while sessions are added), most recently active chain first. A
 * compression continuation or a sub-agent run is not listed on its own: it counts in the
 * `chain_*` figures of the session it continues (`getLineage` lists them). On a newer agent's
 * file, sessions it flags archived or hidden are not listed.
 */
export function listSessionPage(ctx: StoreContext, o?: SessionPageOptions): SessionPage {
  const a = sessionPageArguments(o);
  return readSnapshot(ctx, () => {
    const sqlText = ctx.reads ? pageSql(true, ctx.reads.sessionFlags) : PAGE_SQL;
    const rows = ctx.conn.all<SessionPageRow>(sqlText, [
      {
        sources: a.sources === null ? null : JSON.stringify(a.sources),
        models: a.models === null ? null : JSON.stringify(a.models),
        started_after: a.startedAfter,
        started_before: a.startedBefore,
        title_pattern: a.titlePattern,
        id_pattern: a.idPattern,
        after_key: a.after?.key ?? null,
        after_started: a.after?.startedAt ?? null,
        after_id: a.after?.id ?? null,
        limit: a.limit + 1,
      },
    ]);
    return finishSessionPage(rows, a.limit);
  });
}
