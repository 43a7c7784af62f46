import {
  assembleLineage,
  type Lineage,
  type LineageNode,
  type LineageRow,
  lineageArguments,
  MAX_LINEAGE_HOPS,
} from "@hermes/core";
import { readSnapshot } from "../read-snapshot.js";
import type { StoreContext } from "../store-context.js";

// Explicit markers first (they say what the writer meant), then the reference's heuristics on
// end_reason and timing, the same tests its listing and compression-tip queries use.
const KIND_SQL = `CASE
    WHEN p.id IS NULL THEN NULL
    WHEN json_valid(c.model_config) AND json_extract(c.model_config, '$._branched_from') IS NOT NULL THEN 'branch'
    WHEN json_valid(c.model_config) AND json_extract(c.model_config, '$._delegate_from') IS NOT NULL THEN 'delegate'
    WHEN p.end_reason = 'compression' AND c.started_at >= p.ended_at THEN 'compression'
    WHEN p.end_reason = 'branched' AND c.started_at >= p.ended_at THEN 'branch'
    WHEN c.source = 'subagent' OR p.ended_at IS NULL OR c.started_at < p.ended_at THEN 'delegate'
    ELSE 'other' END`;

const NODE_COLUMNS = `c.id, c.parent_session_id, c.title, c.source, c.started_at, c.ended_at, c.end_reason,
  c.message_count, ${KIND_SQL} AS link`;

const NODE_SQL = `SELECT ${NODE_COLUMNS} FROM sessions c LEFT JOIN sessions p ON p.id = c.parent_session_id
  WHERE c.id = ?`;

// Children are found through idx_sessions_parent. UNION (not UNION ALL) plus the depth bound
// keeps a corrupt cycle finite; duplicates are dropped afterwards.
const DESCENDANTS_SQL = `WITH RECURSIVE tree(id, depth) AS (
    SELECT id, 1 FROM sessions WHERE parent_session_id = :id
    UNION
    SELECT s.id, t.depth + 1 FROM sessions s JOIN tree t ON s.parent_session_id = t.id WHERE t.depth < :max_depth
  )
  SELECT ${NODE_COLUMNS}, t.depth AS depth FROM tree t
    JOIN sessions c ON c.id = t.id LEFT JOIN sessions p ON p.id = c.parent_session_id
  ORDER BY t.depth, c.started_at, c.id
  LIMIT :limit`;

/**
 * The lineage of a session: every ancestor up the `parent_session_id` chain (up to 100, stopping
 * at a cycle) and every descendant (up to `maxDescendants`, default 10,000), each with the kind
 * of its link. `null` for an unknown session. Read from one snapshot.
 */
export function getLineage(ctx: StoreContext, id: string, o?: { maxDescendants?: number }): Lineage | null {
  const { id: sessionId, maxDescendants } = lineageArguments(id, o);
  return readSnapshot(ctx, () => {
    const self = ctx.conn.get<LineageRow>(NODE_SQL, [sessionId]);
    if (self === undefined) return null;
    const ancestors: LineageNode[] = [];
    const seen = new Set<string>([sessionId]);
    let parentId = self.parent_session_id;
    for (let depth = 1; depth <= MAX_LINEAGE_HOPS && parentId !== null && !seen.has(parentId); depth++) {
      const row = ctx.conn.get<LineageRow>(NODE_SQL, [parentId]);
      if (row === undefined) break;
      seen.add(row.id);
      ancestors.push({ ...row, depth });
      parentId = row.parent_session_id;
    }
    const rows = ctx.conn.all<LineageNode>(DESCENDANTS_SQL, [
      { id: sessionId, max_depth: MAX_LINEAGE_HOPS, limit: maxDescendants + seen.size },
    ]);
    return assembleLineage(self, ancestors, rows, maxDescendants);
  });
}
