import { type RawBuilder, sql } from "kysely";
import { anyText, anyTextLiteral, type PgDb } from "../pg-database.js";

/** The caller's filters of a search (checked by `searchArguments`). */
export interface SearchFilters {
  readonly sourceFilter: string[] | null;
  readonly excludeSources: string[] | null;
  readonly roleFilter: string[] | null;
  /**
   * The store holds a newer agent's data (flagged sessions or superseded rows): leave out
   * superseded rows, and the sessions flagged archived / hidden unless brought back. Absent on
   * a store without such data, whose statements stay as they were.
   */
  readonly agentView?: AgentView;
}

/** What a search on a newer agent's data leaves out besides superseded rows. */
export interface AgentView {
  readonly excludeArchived: boolean;
  readonly excludeHidden: boolean;
}

/** The conditions of {@link AgentView} on `m` and `s`. */
function agentViewConditions(v: AgentView): RawBuilder<boolean>[] {
  const parts = [sql<boolean>`(m.view_state IS NULL OR m.view_state <> 'superseded')`];
  if (v.excludeArchived) parts.push(sql<boolean>`s.archived IS NOT TRUE AND s.auto_archived IS NOT TRUE`);
  if (v.excludeHidden) parts.push(sql<boolean>`s.hidden IS NOT TRUE`);
  return parts;
}

/** How a statement carries filter values: as parameters, or as literals (no parameters at all). */
export interface FilterValues {
  readonly literal?: boolean;
}

/** The caller's filters on `m` and `s` as one condition (`true` without any). */
export function filterCondition(f: SearchFilters, values: FilterValues = {}): RawBuilder<boolean> {
  const anyOf = values.literal === true ? anyTextLiteral : anyText;
  const parts: RawBuilder<boolean>[] = [];
  if (f.sourceFilter !== null) parts.push(sql<boolean>`s.source = ${anyOf(f.sourceFilter)}`);
  if (f.excludeSources !== null && f.excludeSources.length > 0)
    parts.push(sql<boolean>`NOT (s.source = ${anyOf(f.excludeSources)})`);
  if (f.roleFilter !== null && f.roleFilter.length > 0)
    parts.push(sql<boolean>`m.role = ${anyOf(f.roleFilter)}`);
  if (f.agentView !== undefined) parts.push(...agentViewConditions(f.agentView));
  return parts.length === 0 ? sql<boolean>`true` : sql<boolean>`${sql.join(parts, sql` AND `)}`;
}

/** `messages m JOIN sessions s` with the search condition and the caller's filters (see {@link filterCondition}). */
export function matching(db: PgDb, where: RawBuilder<boolean>, f: SearchFilters, values: FilterValues = {}) {
  return db
    .selectFrom("messages as m")
    .innerJoin("sessions as s", "s.id", "m.session_id")
    .where(where)
    .where(filterCondition(f, values));
}

/** The columns of a hit (the snippet is made from content, tool calls and tool name). */
export const HIT_COLUMNS = [
  "m.id",
  "m.session_id",
  "m.role",
  "m.content",
  "m.tool_calls",
  "m.timestamp",
  "m.tool_name",
  "s.source",
  "s.model",
  "s.started_at as session_started",
  "m.message_uid",
] as const;

/** A hit's row as {@link HIT_COLUMNS} select it. */
export interface HitRow {
  readonly id: number;
  readonly session_id: string;
  readonly role: string;
  readonly content: string | null;
  readonly tool_calls: string | null;
  readonly timestamp: number;
  readonly tool_name: string | null;
  /** A newer agent's uid of the message (v10), NULL otherwise. */
  readonly message_uid: string | null;
  readonly source: string;
  readonly model: string | null;
  readonly session_started: number;
}
