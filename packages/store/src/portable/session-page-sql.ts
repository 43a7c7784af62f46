// SQL shared by the ways of reading a sessions page (session-page.ts orders every session or
// every one a filter keeps, session-page-by-bounds.ts only the chains of the newest activity):
// each builds the CTEs
// `listed(id, started_at, ended_at, own)` and `chain(id, last_active, n, open)`, then these
// pieces order, page and read the rows the same way.

/**
 * A session is listed on its own ("top") unless it continues its parent: a compression
 * continuation or a sub-agent run is listed under the chain it belongs to. Branches (the parent
 * ended as 'branched' before the child began) and orphans (the parent row is gone) are top.
 */
export const topSql = (s: string) => `(${s}.parent_session_id IS NULL
    OR NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = ${s}.parent_session_id)
    OR EXISTS (SELECT 1 FROM sessions p WHERE p.id = ${s}.parent_session_id
      AND p.end_reason = 'branched' AND ${s}.started_at >= p.ended_at))`;

/** A session's own last activity: its newest message, else its start. */
export const lastActiveSql = (s: string) =>
  `COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = ${s}.id), ${s}.started_at)`;

/** The page's filters on a listed session, as `AND …` (named parameters of `listSessionPage`). */
export const pageFilterSql = (s: string) => `
      AND (:sources IS NULL OR ${s}.source IN (SELECT value FROM json_each(:sources)))
      AND (:models IS NULL OR ${s}.model IN (SELECT value FROM json_each(:models)))
      AND (:started_after IS NULL OR ${s}.started_at >= :started_after)
      AND (:started_before IS NULL OR ${s}.started_at < :started_before)
      AND (:title_pattern IS NULL OR lower(${s}.title) LIKE :title_pattern ESCAPE '\\' OR ${s}.id LIKE :id_pattern ESCAPE '\\')`;

/**
 * `down` and `chain` for the sessions of `listed`: each one's chain walked down from it (the
 * children that continue their parent, to the depth bound of the full order), and its figures.
 */
export const CHAIN_BELOW_SQL = `down(root, id, depth) AS (
    SELECT id, id, 0 FROM listed
    UNION ALL
    SELECT d.root, c.id, d.depth + 1 FROM down d JOIN sessions c ON c.parent_session_id = d.id
    WHERE d.depth < 100 AND NOT ${topSql("c")}
  ),
  chain AS (
    SELECT d.root AS id, MAX(${lastActiveSql("s")}) AS last_active, COUNT(*) AS n, MAX(s.ended_at IS NULL) AS open
    FROM down d CROSS JOIN sessions s ON s.id = d.id WHERE d.depth > 0 GROUP BY d.root
  )`;

/** `, keyed AS …`: each listed session with its chain's figures (its place in the page's order). */
export const KEYED_SQL = `,
  keyed AS (
    SELECT l.id, l.started_at, l.own, COALESCE(ch.n, 0) AS chain_sessions,
      (l.ended_at IS NULL OR COALESCE(ch.open, 0)) AS chain_open,
      MAX(l.own, COALESCE(ch.last_active, l.own)) AS chain_last_active
    FROM listed l LEFT JOIN chain ch ON ch.id = l.id
  )`;

/** The preview of session `s`: the start of its first user message, on one line. */
export const PREVIEW_SQL = (s: string) =>
  `COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, X'0A', ' '), X'0D', ' '), 1, 63) FROM messages m
      WHERE m.session_id = ${s}.id AND m.role = 'user' AND m.content IS NOT NULL
      ORDER BY m.timestamp, m.id LIMIT 1), '')`;

/**
 * `, keyed AS …, page AS … SELECT <the row's columns>`: each listed session with its chain's
 * figures, the page after the cursor in display order, and the columns of its rows. The caller
 * ends it with {@link PAGE_ROWS_FROM_SQL} (and may add columns before).
 */
export const PAGE_ROWS_SQL = `${KEYED_SQL},
  page AS (
    SELECT * FROM keyed
    WHERE :after_key IS NULL OR chain_last_active < :after_key
      OR (chain_last_active = :after_key AND (started_at < :after_started
        OR (started_at = :after_started AND id < :after_id)))
    ORDER BY chain_last_active DESC, started_at DESC, id DESC
    LIMIT :limit
  )
  SELECT s.*, page.own AS last_active,
    ${PREVIEW_SQL("s")} AS preview,
    page.chain_last_active, page.chain_sessions, page.chain_open`;

/** The end of {@link PAGE_ROWS_SQL}: the page's whole rows, in display order. */
export const PAGE_ROWS_FROM_SQL = `
  FROM page JOIN sessions s ON s.id = page.id
  ORDER BY page.chain_last_active DESC, page.started_at DESC, page.id DESC`;
