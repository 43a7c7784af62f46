import { type RawBuilder, sql } from "kysely";
import type { PgDb } from "../pg-database.js";

/**
 * The `state_meta` key an import sets when it writes sessions a newer agent flags (archived,
 * hidden) or superseded rows: searches then add the agent's visibility conditions, and a store
 * without such data keeps its statements (and plans) as they were.
 */
export const AGENT_VIEW_META_KEY = "hermes_agent_view";

/** Whether the store holds a newer agent's flagged sessions or superseded rows (a primary-key read). */
export async function holdsAgentView(db: PgDb): Promise<boolean> {
  const row = await db
    .selectFrom("state_meta")
    .select("key")
    .where("key", "=", AGENT_VIEW_META_KEY)
    .executeTakeFirst();
  return row !== undefined;
}

/** Records that the store holds such data (idempotent; in the writing transaction). */
export async function noteAgentView(db: PgDb): Promise<void> {
  await sql`INSERT INTO state_meta (key, value) VALUES (${AGENT_VIEW_META_KEY}, '1') ON CONFLICT (key) DO NOTHING`.execute(
    db,
  );
}

/**
 * A message the agent displays (every row but a superseded one: rewound, or an original a
 * compaction copied). NULL (data from a v11 file) is displayed. `m` is the alias, or none.
 */
export function displayedMessage(m?: string): RawBuilder<boolean> {
  const column = sql.ref(m === undefined ? "view_state" : `${m}.view_state`);
  return sql<boolean>`(${column} IS NULL OR ${column} <> 'superseded')`;
}

/**
 * A session default listings show: not archived (by the user or the agent's stale sweep) unless
 * `includeArchived`, not hidden unless `includeHidden`; NULL flags (v11 data) are not set.
 * `null` when both are brought back (no condition).
 */
export function listedSession(
  s: string,
  o: { includeArchived: boolean; includeHidden: boolean },
): RawBuilder<boolean> | null {
  const parts: RawBuilder<boolean>[] = [];
  const off = (name: string) => sql<boolean>`${sql.ref(`${s}.${name}`)} IS NOT TRUE`;
  if (!o.includeArchived) parts.push(off("archived"), off("auto_archived"));
  if (!o.includeHidden) parts.push(off("hidden"));
  return parts.length === 0 ? null : sql<boolean>`(${sql.join(parts, sql` AND `)})`;
}

/**
 * A message the model is given back (replay, conversation windows): an active row, or one
 * without a view state (v11 data). Summarized (compacted) and superseded rows are not.
 */
export function replayedMessage(): RawBuilder<boolean> {
  return sql<boolean>`(view_state IS NULL OR view_state = 'active')`;
}
