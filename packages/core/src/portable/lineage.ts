import { nonNegativeInt, optionsObject, requireId } from "../validation/arguments.js";

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

/** A lineage node as a backend reads it, before its `depth` is known. */
export type LineageRow = Omit<LineageNode, "depth">;

/**
 * Checks the arguments of `getLineage` (`INVALID_ARGUMENT`): the session id and `maxDescendants`
 * (default 10,000, at most 1,000,000).
 */
export function lineageArguments(
  id: unknown,
  o: { maxDescendants?: number } | undefined,
): { id: string; maxDescendants: number } {
  const sessionId = requireId("id", id);
  const maxDescendants = nonNegativeInt(
    "maxDescendants",
    optionsObject("options", o).maxDescendants,
    10_000,
    1_000_000,
  );
  return { id: sessionId, maxDescendants };
}

/**
 * Assembles a lineage from what a backend read: the session, its ancestors nearest first (the
 * parent walk, stopped at a cycle or after `MAX_LINEAGE_HOPS`), and its descendants breadth
 * first as a recursive query gives them (a row reached twice, or the session itself through a
 * corrupt cycle, is kept once), at most `maxDescendants`.
 */
export function assembleLineage(
  session: LineageRow,
  ancestorsNearestFirst: LineageNode[],
  descendantRows: Iterable<LineageNode>,
  maxDescendants: number,
): Lineage {
  const ancestors = ancestorsNearestFirst.reverse();
  const descendants: LineageNode[] = [];
  const inTree = new Set<string>([session.id]);
  for (const row of descendantRows) {
    if (inTree.has(row.id) || descendants.length >= maxDescendants) continue;
    inTree.add(row.id);
    descendants.push(row);
  }
  return {
    session: { ...session, depth: 0 },
    root_id: ancestors[0]?.id ?? session.id,
    ancestors,
    descendants,
  };
}
