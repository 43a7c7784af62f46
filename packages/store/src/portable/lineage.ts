import { readSnapshot } from "../read-snapshot.js";
import type { StoreContext } from "../store-context.js";
import { nonNegativeInt, options, requireId } from "../validate.js";

/**
 * How a session relates to its parent:
 * - `compression`: the parent was ended by context compression and this session continues it
 *   (parent `end_reason` = 'compression', child started at or after the parent ended);
 * - `branch`: a `/branch` or `forkSession` copy (the `_branched_from` marker in `model_config`,
 *   or parent `end_reason` = 'branched' and child started after the parent ended);
 * - `delegate`: a sub-agent run (the `_delegate_from` marker, source `subagent`, or started while
 *   the parent was still live);
 * - `other`: any other continuation (the parent ended for another reason before the child began).
 */
export type LineageLinkKind = "compression" | "branch" | "delegate" | "other";

/** One session of a lineage, with the link to its parent. */
export interface LineageNode {
  id: string;
  parent_session_id: string | null;
  title: string | null;
  source: string;
  started_at: number;
  ended_at: number | null;
  end_reason: string | null;
  message_count: number | null;
  /** Generations away from the session asked about (1 = parent or child). */
  depth: number;
  /** The kind of the link to `parent_session_id`; `null` for a root. */
  link: LineageLinkKind | null;
}

/** A session's ancestors (root first) and descendants (breadth first). */
export interface Lineage {
  session: LineageNode;
  /** The first session of the chain (the session itself when it has no parent). */
  root_id: string;
  ancestors: LineageNode[];
  descendants: LineageNode[];
}

/** Longest parent chain followed (as the reference's lineage walks). */
const MAX_HOPS = 100;

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

type NodeRow = Omit<LineageNode, "depth"> & { depth?: number };

/**
 * The lineage of a session: every ancestor up the `parent_session_id` chain (up to 100, stopping
 * at a cycle) and every descendant (up to `maxDescendants`, default 10,000), each with the kind
 * of its link. `null` for an unknown session. Read from one snapshot.
 */
export function getLineage(ctx: StoreContext, id: string, o?: { maxDescendants?: number }): Lineage | null {
  const sessionId = requireId("id", id);
  const limit = nonNegativeInt("maxDescendants", options("options", o).maxDescendants, 10_000, 1_000_000);
  return readSnapshot(ctx, () => {
    const self = ctx.conn.get<NodeRow>(NODE_SQL, [sessionId]);
    if (self === undefined) return null;
    const session: LineageNode = { ...self, depth: 0 };
    const ancestors: LineageNode[] = [];
    const seen = new Set<string>([sessionId]);
    let parentId = self.parent_session_id;
    for (let depth = 1; depth <= MAX_HOPS && parentId !== null && !seen.has(parentId); depth++) {
      const row = ctx.conn.get<NodeRow>(NODE_SQL, [parentId]);
      if (row === undefined) break;
      seen.add(row.id);
      ancestors.push({ ...row, depth });
      parentId = row.parent_session_id;
    }
    ancestors.reverse();
    const descendants: LineageNode[] = [];
    const rows = ctx.conn.all<NodeRow & { depth: number }>(DESCENDANTS_SQL, [
      { id: sessionId, max_depth: MAX_HOPS, limit: limit + seen.size },
    ]);
    const inTree = new Set<string>([sessionId]);
    for (const row of rows) {
      if (inTree.has(row.id) || descendants.length >= limit) continue;
      inTree.add(row.id);
      descendants.push(row);
    }
    return { session, root_id: ancestors[0]?.id ?? sessionId, ancestors, descendants };
  });
}
