import { type RawBuilder, sql } from "kysely";

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
