import {
  hasSessionFilter,
  type ListSessionsRichOptions,
  MAX_LIMIT,
  nonNegativeInt,
  optionalBoolean,
  optionalString,
  optionalStringArray,
  optionsObject,
  previewOf,
  type RichSessionRow,
  requireId,
  type SearchSessionsOptions,
  type SessionRow,
  type SessionWithLastActive,
  sessionFilterArguments,
  TIP_FIELDS,
  toSessionViewFields,
} from "@hermes/core";
import type { HermesDatabase } from "@hermes/schema";
import { type Kysely, sql } from "kysely";
import { SESSION_FLAGS_VIEW } from "../file-views.js";
import { type CompiledTemplate, compileQuery, param } from "../prepared-query.js";
import type { StoreContext } from "../store-context.js";

// The newest message's time, else the start: the same value as the reference's LEFT JOIN on
// `MAX(timestamp) … GROUP BY session_id`, computed per session through
// idx_messages_session(session_id, timestamp) instead of grouping every message.
const lastActive = sql<number>`COALESCE((SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id), s.started_at)`;

type PageArgs = { limit: number; offset: number; hide_archived?: boolean; hide_hidden?: boolean };

// Newer agents' files flag sessions archived or hidden, and their default listings leave them
// out. The flags are read through a temp view of this connection (see file-views.ts), so this
// condition is only ever compiled into the queries run on such a file.
const unflagged = sql<boolean>`s.id NOT IN (SELECT id FROM ${sql.raw(SESSION_FLAGS_VIEW)}
  WHERE (archived != 0 AND ${param("hide_archived")} = 1) OR (hidden != 0 AND ${param("hide_hidden")} = 1))`;

/** The flag arguments of a listing: `null` when the file has no flags (a v11 file). */
function flagArgs(
  ctx: StoreContext,
  opts: { includeArchived?: unknown; includeHidden?: unknown },
): { hide_archived: boolean; hide_hidden: boolean } | null {
  const includeArchived = optionalBoolean("includeArchived", opts.includeArchived, false);
  const includeHidden = optionalBoolean("includeHidden", opts.includeHidden, false);
  if (!ctx.reads?.sessionFlags) return null;
  return { hide_archived: !includeArchived, hide_hidden: !includeHidden };
}

// Sorting every session by last_active is a full scan; the sort carries only (id, started_at,
// last_active) and the page's whole rows are read afterwards, so large columns such as
// system prompts are read for 20 rows instead of every row (about 2x faster at 100,000
// sessions with 2 KB prompts). The order is the reference's, and total (id is unique).
function searchSessionsQuery<A extends PageArgs>(bySource: boolean, flagged = false): CompiledTemplate<A> {
  return compileQuery<A>((db) =>
    db
      .with("page", (w) => {
        let q = w.selectFrom("sessions as s").select(["s.id", "s.started_at", lastActive.as("last_active")]);
        if (bySource) q = q.where("s.source", "=", param("source"));
        if (flagged) q = q.where(unflagged);
        return q
          .orderBy("last_active", "desc")
          .orderBy("s.started_at", "desc")
          .orderBy("s.id", "desc")
          .limit(param("limit"))
          .offset(param("offset"));
      })
      .selectFrom("page")
      .innerJoin("sessions as s", "s.id", "page.id")
      .selectAll("s")
      .select("page.last_active")
      .orderBy("page.last_active", "desc")
      .orderBy("page.started_at", "desc")
      .orderBy("page.id", "desc"),
  );
}

const searchAllQ = searchSessionsQuery<PageArgs>(false);
const searchSourceQ = searchSessionsQuery<PageArgs & { source: string }>(true);
const searchAllFlaggedQ = searchSessionsQuery<PageArgs>(false, true);
const searchSourceFlaggedQ = searchSessionsQuery<PageArgs & { source: string }>(true, true);

/**
 * Sessions with `last_active` (newest message time, else `started_at`), most recently used
 * first: `ORDER BY last_active DESC, started_at DESC, id DESC`. An empty `source` means all.
 * On a newer agent's file, archived and hidden sessions are left out unless `includeArchived`
 * / `includeHidden` (a v11 file has no such flags).
 */
export function searchSessions(ctx: StoreContext, o?: SearchSessionsOptions): SessionWithLastActive[] {
  const opts = optionsObject("options", o);
  const source = optionalString("source", opts.source);
  const flags = flagArgs(ctx, opts);
  const page: PageArgs = {
    limit: nonNegativeInt("limit", opts.limit, 20, MAX_LIMIT),
    offset: nonNegativeInt("offset", opts.offset, 0),
    ...flags,
  };
  if (source) {
    const q = flags === null ? searchSourceQ : searchSourceFlaggedQ;
    return ctx.conn
      .allOf<SessionWithLastActive, PageArgs & { source: string }>(q, { ...page, source })
      .map(toSessionViewFields);
  }
  return ctx.conn
    .allOf<SessionWithLastActive, PageArgs>(flags === null ? searchAllQ : searchAllFlaggedQ, page)
    .map(toSessionViewFields);
}

// First user message with content, by (timestamp, id), CR/LF turned into spaces and cut to
// 63 characters in SQL; the rest of the preview rule (trim, 60 + "...") is applied in
// `previewOf` exactly as the reference does it in Python.
const previewRaw = sql<string>`COALESCE(
  (SELECT SUBSTR(REPLACE(REPLACE(m.content, X'0A', ' '), X'0D', ' '), 1, 63)
   FROM messages m
   WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
   ORDER BY m.timestamp, m.id LIMIT 1),
  '')`;

// The raw preview comes back in the `preview` column itself, after `last_active`, so each row
// is finished in place with the reference's key order (columns, last_active, preview):
// copying rows with object rest/spread cost more than the query on a 20-row page.
type RawRichRow = SessionRow & { last_active: number; preview: unknown };

function richSelect(db: Kysely<HermesDatabase>) {
  return db
    .selectFrom("sessions as s")
    .selectAll("s")
    .select([lastActive.as("last_active"), previewRaw.as("preview")]);
}

type RichSelect = ReturnType<typeof richSelect>;
type ListArgs = PageArgs & {
  source?: string;
  exclude?: string;
  models?: string | null;
  started_after?: number | null;
  started_before?: number | null;
  title_pattern?: string | null;
  id_pattern?: string | null;
};

// The filters of `SessionFilterOptions`, each one a no-op when its parameter is NULL: one shape
// for any mix of them (compiled only into the queries that have a filter).
const filters = sql<boolean>`(${param("models")} IS NULL OR s.model IN (SELECT value FROM json_each(${param("models")})))
  AND (${param("started_after")} IS NULL OR s.started_at >= ${param("started_after")})
  AND (${param("started_before")} IS NULL OR s.started_at < ${param("started_before")})
  AND (${param("title_pattern")} IS NULL OR lower(s.title) LIKE ${param("title_pattern")} ESCAPE '\\'
    OR s.id LIKE ${param("id_pattern")} ESCAPE '\\')`;

function listQuery(
  includeChildren: boolean,
  bySource: boolean,
  excluding: boolean,
  flagged: boolean,
  filtered: boolean,
): CompiledTemplate<ListArgs> {
  return compileQuery<ListArgs>((db) => {
    let q: RichSelect = richSelect(db);
    if (!includeChildren) {
      // Roots, and "branch" children (the parent ended as 'branched' before the child
      // started). Delegate sub-agent runs and compression continuations, which also have a
      // parent, stay hidden: they started while the parent was live, or the parent ended
      // for another reason.
      q = q.where(
        sql<boolean>`(s.parent_session_id IS NULL OR EXISTS (SELECT 1 FROM sessions p
          WHERE p.id = s.parent_session_id AND p.end_reason = 'branched' AND s.started_at >= p.ended_at))`,
      );
    }
    if (bySource) q = q.where("s.source", "=", param("source"));
    // One statement for any number of excluded sources: the list is bound as one JSON array.
    if (excluding)
      q = q.where(sql<boolean>`s.source NOT IN (SELECT value FROM json_each(${param("exclude")}))`);
    if (flagged) q = q.where(unflagged);
    if (filtered) q = q.where(filters);
    return q.orderBy("s.started_at", "desc").limit(param("limit")).offset(param("offset"));
  });
}

// All 32 shapes compiled at load, indexed by (filtered, flagged, includeChildren, bySource, excluding).
const listQueries: ReadonlyArray<CompiledTemplate<ListArgs>> = Array.from({ length: 32 }, (_, bits) =>
  listQuery((bits & 4) !== 0, (bits & 2) !== 0, (bits & 1) !== 0, (bits & 8) !== 0, (bits & 16) !== 0),
);

const richRowQ = compileQuery<{ id: string }>((db) => richSelect(db).where("s.id", "=", param("id")));

function finishRich(row: RawRichRow): RichSessionRow {
  (row as RichSessionRow).preview = previewOf(row.preview);
  return toSessionViewFields(row as RichSessionRow);
}

/**
 * Sessions for a picker, newest start first, each with `last_active` and `preview` (the
 * first user message, CR/LF as spaces, trimmed, 60 characters + "..." when longer; `""` if
 * none).
 *
 * - Children are hidden unless `includeChildren`, except branch children (parent ended as
 *   'branched' no later than the child started); delegate sub-agent runs and compression
 *   continuations stay hidden.
 * - With `projectCompressionTips` (default) and without `includeChildren`, a row that ended
 *   by 'compression' shows its compression tip's id, ended_at, end_reason, counters, title,
 *   last_active, preview, model and system_prompt, keeps its own `started_at` (so the order is
 *   stable) and gains `_lineage_root_id` (its own id).
 * - `source` (non-empty) keeps one source; `excludeSources` (non-empty) drops some;
 *   `models`, `startedAfter`, `startedBefore` and `title` filter as in `listSessionPage`.
 * - On a newer agent's file, sessions it flags `archived` or `hidden` are left out, as in its
 *   own listings, unless `includeArchived` / `includeHidden`; `message_count` is its counter
 *   (active rows), `preview` and `last_active` come from the messages it displays.
 */
export function listSessionsRich(ctx: StoreContext, o?: ListSessionsRichOptions): RichSessionRow[] {
  const opts = optionsObject("options", o);
  const source = optionalString("source", opts.source);
  const exclude = optionalStringArray("excludeSources", opts.excludeSources);
  const includeChildren = optionalBoolean("includeChildren", opts.includeChildren, false);
  const projectTips = optionalBoolean("projectCompressionTips", opts.projectCompressionTips, true);
  const flags = flagArgs(ctx, opts);
  const args: ListArgs = {
    limit: nonNegativeInt("limit", opts.limit, 20, MAX_LIMIT),
    offset: nonNegativeInt("offset", opts.offset, 0),
    ...flags,
  };
  // Falsy filters mean "no filter", as in the reference ("" source, [] exclusions).
  const bySource = source !== null && source !== "";
  const excluding = exclude !== null && exclude.length > 0;
  if (bySource) args.source = source;
  if (excluding) args.exclude = JSON.stringify(exclude);
  const filter = sessionFilterArguments(opts);
  const filtered = hasSessionFilter(filter);
  if (filtered) {
    args.models = filter.models === null ? null : JSON.stringify(filter.models);
    args.started_after = filter.startedAfter;
    args.started_before = filter.startedBefore;
    args.title_pattern = filter.titlePattern;
    args.id_pattern = filter.idPattern;
  }
  const template =
    listQueries[
      (filtered ? 16 : 0) |
        (flags !== null ? 8 : 0) |
        (includeChildren ? 4 : 0) |
        (bySource ? 2 : 0) |
        (excluding ? 1 : 0)
    ]!;
  const rows = ctx.conn.allOf<RawRichRow, ListArgs>(template, args).map(finishRich);
  if (!projectTips || includeChildren) return rows;
  return rows.map((row) => {
    if (row.end_reason !== "compression") return row;
    const tipId = compressionTip(ctx, row.id);
    if (tipId === row.id) return row;
    const raw = ctx.conn.getOf<RawRichRow, { id: string }>(richRowQ, { id: tipId });
    if (raw === undefined) return row;
    const tip = finishRich(raw);
    const merged: Record<string, unknown> = { ...row };
    for (const key of TIP_FIELDS) merged[key] = tip[key];
    merged._lineage_root_id = row.id;
    return merged as unknown as RichSessionRow;
  });
}

// A compression continuation: a child of a parent that ended by 'compression', started no
// earlier than that end (delegate runs and branches also have parents but started while the
// parent was live, or the parent ended for another reason). The newest such child wins.
const continuationQ = compileQuery<{ id: string }>((db) =>
  db
    .selectFrom("sessions")
    .select("id")
    .where("parent_session_id", "=", param("id"))
    .where(
      sql<boolean>`started_at >= (SELECT ended_at FROM sessions WHERE id = ${param("id")} AND end_reason = 'compression')`,
    )
    .orderBy("started_at", "desc")
    .limit(1),
);

/** The reference bounds the walk at 100 hops (deeper chains are pathological). */
const MAX_TIP_HOPS = 100;

function compressionTip(ctx: StoreContext, id: string): string {
  let current = id;
  for (let hop = 0; hop < MAX_TIP_HOPS; hop++) {
    const next = ctx.conn.getOf<{ id: string }, { id: string }>(continuationQ, { id: current });
    if (next === undefined) return current;
    current = next.id;
  }
  return current;
}

/**
 * The latest session of `id`'s compression chain (following the newest continuation, at most
 * 100 hops); `id` itself when it has none, or when no such session exists.
 */
export function getCompressionTip(ctx: StoreContext, id: string): string {
  return compressionTip(ctx, requireId("id", id));
}

const hasMessagesQ = compileQuery<{ id: string }>((db) =>
  db.selectFrom("messages").select(sql<number>`1`.as("one")).where("session_id", "=", param("id")).limit(1),
);

const newestChildQ = compileQuery<{ id: string }>((db) =>
  db
    .selectFrom("sessions")
    .select("id")
    .where("parent_session_id", "=", param("id"))
    .orderBy("started_at", "desc")
    .orderBy("id", "desc")
    .limit(1),
);

/** The reference's depth cap against loops in malformed parent links. */
const MAX_RESUME_HOPS = 32;

/**
 * The session a resume of `id` should load: `id` when it has messages; else the first
 * descendant with messages, following the newest child (`started_at DESC, id DESC`) at each
 * step, at most 32 hops and never revisiting a session; else `id`. Compression forks a new
 * child that receives the messages, leaving the parent empty (reference issue #15000).
 */
export function resolveResumeSessionId(ctx: StoreContext, id: string): string {
  const start = requireId("id", id);
  const hasMessages = (sid: string) => ctx.conn.getOf(hasMessagesQ, { id: sid }) !== undefined;
  if (hasMessages(start)) return start;
  const seen = new Set([start]);
  let current = start;
  for (let hop = 0; hop < MAX_RESUME_HOPS; hop++) {
    const child = ctx.conn.getOf<{ id: string }, { id: string }>(newestChildQ, { id: current })?.id;
    if (child === undefined || child === "" || seen.has(child)) return start;
    seen.add(child);
    if (hasMessages(child)) return child;
    current = child;
  }
  return start;
}
