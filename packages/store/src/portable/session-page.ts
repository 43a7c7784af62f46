import { InvalidArgumentError } from "../errors.js";
import { previewOf } from "../operations/listing.js";
import { escapeLike } from "../operations/sessions.js";
import { readSnapshot } from "../read-snapshot.js";
import type { StoreContext } from "../store-context.js";
import type { SessionRow } from "../types.js";
import { nonNegativeInt, optionalNumber, optionalString, optionalStringArray, options } from "../validate.js";

/** Options of `listSessionPage`. */
export interface SessionPageOptions {
  /** Only sessions of these sources. */
  sources?: string[];
  /** Only sessions of these models. */
  models?: string[];
  /** Sessions started at or after this time (Unix epoch seconds). */
  startedAfter?: number;
  /** Sessions started before this time (Unix epoch seconds). */
  startedBefore?: number;
  /** A part of the title (ASCII letters in any case), or the beginning of the id. */
  title?: string;
  /** Sessions per page: 1–500, default 50. */
  limit?: number;
  /** `nextCursor` of the previous page; absent for the first page. */
  cursor?: string;
}

/**
 * A listed session: every column, its own `last_active` and `preview` (as `listSessionsRich`),
 * and the figures of its chain, the compression continuations and sub-agent runs below it.
 */
export type SessionPageRow = SessionRow & {
  last_active: number;
  preview: string;
  /** The newest activity of the session and its chain: what the page is ordered by. */
  chain_last_active: number;
  /** Sessions of the chain below this one (any depth); 0 for a session on its own. */
  chain_sessions: number;
  /** The session or a session of its chain has not ended. */
  chain_open: boolean;
};

/** One page of `listSessionPage`. */
export interface SessionPage {
  sessions: SessionPageRow[];
  /** Pass as `cursor` for the next page; `null` on the last page. */
  nextCursor: string | null;
}

/** The validated arguments of `listSessionPage` (shared with other backends). */
export interface SessionPageArguments {
  sources: string[] | null;
  models: string[] | null;
  startedAfter: number | null;
  startedBefore: number | null;
  /** A LIKE pattern (escaped with `\`) for the title, and one for an id prefix; `null`: no filter. */
  titlePattern: string | null;
  idPattern: string | null;
  limit: number;
  /** Sessions strictly after this position of the order. */
  after: { key: number; startedAt: number; id: string } | null;
}

const MAX_PAGE = 500;

/** The cursor of the row a page ended with: its place in the order, opaque to callers. */
export function sessionPageCursor(row: {
  chain_last_active: number;
  started_at: number;
  id: string;
}): string {
  return Buffer.from(JSON.stringify([row.chain_last_active, row.started_at, row.id])).toString("base64url");
}

function decodeCursor(cursor: string): SessionPageArguments["after"] {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    value = null;
  }
  if (
    !Array.isArray(value) ||
    value.length !== 3 ||
    typeof value[0] !== "number" ||
    typeof value[1] !== "number" ||
    typeof value[2] !== "string"
  ) {
    throw new InvalidArgumentError("cursor", "cursor is not one that listSessionPage returned");
  }
  return { key: value[0], startedAt: value[1], id: value[2] };
}

/** Checks the options of `listSessionPage` (shared with other backends). */
export function sessionPageArguments(o: SessionPageOptions | undefined): SessionPageArguments {
  const opts = options("options", o);
  const limit = nonNegativeInt("limit", opts.limit, 50, MAX_PAGE);
  if (limit === 0) throw new InvalidArgumentError("limit", "limit must be at least 1");
  const title = optionalString("title", opts.title);
  const cursor = optionalString("cursor", opts.cursor);
  const list = (name: string, value: unknown) => {
    const items = optionalStringArray(name, value);
    return items === null || items.length === 0 ? null : items;
  };
  return {
    sources: list("sources", opts.sources),
    models: list("models", opts.models),
    startedAfter: optionalNumber("startedAfter", opts.startedAfter),
    startedBefore: optionalNumber("startedBefore", opts.startedBefore),
    titlePattern: title ? `%${escapeLike(title.toLowerCase())}%` : null,
    idPattern: title ? `${escapeLike(title)}%` : null,
    limit,
    after: cursor ? decodeCursor(cursor) : null,
  };
}

/** Turns the page's rows (one more than `limit` when a next page exists) into a page. */
export function finishSessionPage(rows: SessionPageRow[], limit: number): SessionPage {
  const more = rows.length > limit;
  const sessions = more ? rows.slice(0, limit) : rows;
  for (const row of sessions) {
    row.preview = previewOf(row.preview);
    row.chain_open = Boolean(row.chain_open);
  }
  const last = sessions[sessions.length - 1];
  return { sessions, nextCursor: more && last !== undefined ? sessionPageCursor(last) : null };
}

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
const PAGE_SQL = `WITH RECURSIVE edge AS MATERIALIZED (
    SELECT c.id, c.parent_session_id AS parent FROM sessions c INDEXED BY idx_sessions_parent
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
    WHERE s.id NOT IN (SELECT id FROM edge)
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

/**
 * A page of sessions for a browser: every session is reachable by following `nextCursor`
 * (keyset paging, stable while sessions are added), most recently active chain first. A
 * compression continuation or a sub-agent run is not listed on its own: it counts in the
 * `chain_*` figures of the session it continues (`getLineage` lists them).
 */
export function listSessionPage(ctx: StoreContext, o?: SessionPageOptions): SessionPage {
  const a = sessionPageArguments(o);
  return readSnapshot(ctx, () => {
    const rows = ctx.conn.all<SessionPageRow>(PAGE_SQL, [
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
