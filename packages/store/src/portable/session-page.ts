import {
  finishSessionPage,
  isFilteredPage,
  type SessionPage,
  type SessionPageOptions,
  type SessionPageRow,
  sessionPageArguments,
} from "@hermes/core";
import { SESSION_FLAGS_VIEW } from "../file-views.js";
import { readSnapshot } from "../read-snapshot.js";
import type { StoreContext } from "../store-context.js";
import { sessionPageFromOrder } from "./session-order-cache.js";
import { sessionPageByBounds } from "./session-page-by-bounds.js";
import {
  CHAIN_BELOW_SQL,
  KEYED_SQL,
  lastActiveSql,
  PAGE_ROWS_FROM_SQL,
  PAGE_ROWS_SQL,
  pageFilterSql,
  topSql,
} from "./session-page-sql.js";

// `edge`: the sessions listed under their parent. `up` walks each one to the top session of its
// chain (UNION and the depth bound keep a corrupt cycle finite). Ordering every session by
// activity reads every session (about 0.2-0.4 s at 100,000 with 2 KB system prompts, whose
// overflow pages hold the later columns): session-page-by-bounds.ts avoids it when it can.
// A newer agent's file is read through views (no index to name), and its archived and hidden
// sessions are left out as its own listings leave them out.
const listingSql = (newerFile: boolean, flagged: boolean) => `WITH RECURSIVE edge AS MATERIALIZED (
    SELECT c.id, c.parent_session_id AS parent FROM sessions c${newerFile ? "" : " INDEXED BY idx_sessions_parent"}
    WHERE c.parent_session_id IS NOT NULL AND NOT ${topSql("c")}
  ),
  up(id, root, depth) AS (
    SELECT id, parent, 1 FROM edge
    UNION
    SELECT u.id, e.parent, u.depth + 1 FROM up u JOIN edge e ON e.id = u.root WHERE u.depth < 100
  ),
  chain AS MATERIALIZED (
    SELECT u.root AS id, MAX(${lastActiveSql("s")}) AS last_active, COUNT(*) AS n, MAX(s.ended_at IS NULL) AS open
    FROM up u JOIN sessions s ON s.id = u.id WHERE u.root NOT IN (SELECT id FROM edge) GROUP BY u.root
  ),
  listed AS MATERIALIZED (
    SELECT s.id, s.started_at, s.ended_at, ${lastActiveSql("s")} AS own FROM sessions s
    WHERE s.id NOT IN (SELECT id FROM edge)${flagged ? ` AND s.id NOT IN (SELECT id FROM ${SESSION_FLAGS_VIEW} WHERE archived != 0 OR hidden != 0)` : ""}${pageFilterSql("s")}
  )`;
const pageSql = (newerFile: boolean, flagged: boolean) =>
  `${listingSql(newerFile, flagged)}${PAGE_ROWS_SQL}${PAGE_ROWS_FROM_SQL}`;
// Every listed session in the page's order, without cursor or limit: what a read-only store
// keeps per data_version (session-order-cache.ts).
const orderSql = (newerFile: boolean, flagged: boolean) => `${listingSql(newerFile, flagged)}${KEYED_SQL}
  SELECT id, started_at, own, chain_sessions, chain_open, chain_last_active FROM keyed
  ORDER BY chain_last_active DESC, started_at DESC, id DESC`;
const PAGE_SQL = pageSql(false, false);
const ORDER_SQL = orderSql(false, false);

// A filtered page of a v11 file: only the top sessions the filters keep, each with its chain
// walked down from it (no pass over every chain of the file).
const FILTERED_PAGE_SQL = `WITH RECURSIVE listed AS MATERIALIZED (
    SELECT s.id, s.started_at, s.ended_at, ${lastActiveSql("s")} AS own FROM sessions s
    WHERE 1${pageFilterSql("s")} AND ${topSql("s")}
  ),
  ${CHAIN_BELOW_SQL}${PAGE_ROWS_SQL}${PAGE_ROWS_FROM_SQL}`;

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
    const params = {
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
    };
    // A newer agent's file: every session through its views. A v11 file: a filtered page orders
    // what the filters keep, an unfiltered one is proven from the newest activity when it can be.
    const sqlText = ctx.reads
      ? pageSql(true, ctx.reads.sessionFlags)
      : isFilteredPage(a)
        ? FILTERED_PAGE_SQL
        : PAGE_SQL;
    // A read-only store without a proof orders every chain once per change of the file.
    const fromOrder = () =>
      ctx.readOnly !== undefined && !isFilteredPage(a)
        ? sessionPageFromOrder(ctx, a, ctx.reads ? orderSql(true, ctx.reads.sessionFlags) : ORDER_SQL, params)
        : null;
    const rows =
      sessionPageByBounds(ctx, a, params) ?? fromOrder() ?? ctx.conn.all<SessionPageRow>(sqlText, [params]);
    return finishSessionPage(rows, a.limit);
  });
}
