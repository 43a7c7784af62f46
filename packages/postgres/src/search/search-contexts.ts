import { firstCodePoints } from "@hermes/search";
import { type Expression, type RawBuilder, sql } from "kysely";
import { PREPARED, PREPARED_STEERED } from "../pg-database.js";
import { HIT_COLUMNS, type HitRow } from "./hit-rows.js";

/** A hit's neighbours as the page statement returns them (see {@link withContexts}). */
export interface ContextColumns {
  readonly prole: string | null;
  readonly pcontent: string | null;
  readonly role: string;
  readonly content: string | null;
  readonly nrole: string | null;
  readonly ncontent: string | null;
}

/** A hit's columns as the page hands them on (the page's own ordering columns stay behind). */
const PAGE_COLUMNS = HIT_COLUMNS.map((c) => `h.${c.split(/\.| as /).pop()}`).join(", ");

/**
 * The page query `page` (rows of {@link HIT_COLUMNS}, and any columns of its own ordering)
 * with each hit's context in the same statement, one round trip: the previous and next message
 * of the same session by `(timestamp, id)`, contents cut to 200 characters on the server.
 * Rows keep the page's order (numbered as they leave it, sorted by that number). `prepared`:
 * a statement whose text does not depend on the query's terms (they are parameters), sent as a
 * named prepared statement (planned once per connection); `"steered"`: also with the planner
 * steered to ordered index scans (see `PREPARED_STEERED`).
 */
export function withContexts(
  page: Expression<HitRow>,
  prepared: boolean | "steered",
): RawBuilder<HitRow & ContextColumns> {
  const marker = prepared === "steered" ? PREPARED_STEERED : prepared ? PREPARED : "";
  return sql<
    HitRow & ContextColumns
  >`${sql.raw(marker)}SELECT ${sql.raw(PAGE_COLUMNS)}, p.role AS prole, left(p.content, 200) AS pcontent,
      n.role AS nrole, left(n.content, 200) AS ncontent
    FROM (SELECT page.*, row_number() OVER () AS hermes_ord FROM ${page} AS page) AS h
    LEFT JOIN LATERAL (SELECT c.role, c.content FROM messages c WHERE c.session_id = h.session_id
        AND (c.timestamp, c.id) < (h.timestamp, h.id) ORDER BY c.timestamp DESC, c.id DESC LIMIT 1) p ON true
    LEFT JOIN LATERAL (SELECT c.role, c.content FROM messages c WHERE c.session_id = h.session_id
        AND (c.timestamp, c.id) > (h.timestamp, h.id) ORDER BY c.timestamp, c.id LIMIT 1) n ON true
    ORDER BY h.hermes_ord`;
}

/** A hit's context: the previous message, the hit, the next one (200 code points each). */
export function hitContext(r: ContextColumns): Array<{ role: string; content: string }> {
  const context: Array<{ role: string; content: string }> = [];
  if (r.prole !== null) context.push({ role: r.prole, content: firstCodePoints(r.pcontent ?? "", 200) });
  context.push({ role: r.role, content: firstCodePoints(r.content ?? "", 200) });
  if (r.nrole !== null) context.push({ role: r.nrole, content: firstCodePoints(r.ncontent ?? "", 200) });
  return context;
}
