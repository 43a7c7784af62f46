import {
  type Lineage,
  type LineageLinkKind,
  type LineageNode,
  MAX_LINEAGE_HOPS,
  nonNegativeInt,
  optionsObject,
  requireId,
} from "@hermes/core";
import { sql } from "kysely";
import type { PgDb } from "../pg-database.js";
import type { PgStoreContext } from "../pg-store-context.js";

type NodeRow = Omit<LineageNode, "depth" | "link"> & {
  c_model_config: string | null;
  p_id: string | null;
  p_end_reason: string | null;
  p_ended_at: number | null;
};

const NODE_FIELDS = `c.id, c.parent_session_id, c.title, c.source, c.started_at, c.ended_at, c.end_reason,
  c.message_count, c.model_config AS c_model_config, p.id AS p_id, p.end_reason AS p_end_reason, p.ended_at AS p_ended_at`;

/** A lineage node (`c`) with what its link kind depends on from its parent (`p`). */
function nodeQuery(db: PgDb) {
  return db
    .selectFrom("sessions as c")
    .leftJoin("sessions as p", "p.id", "c.parent_session_id")
    .select([
      "c.id",
      "c.parent_session_id",
      "c.title",
      "c.source",
      "c.started_at",
      "c.ended_at",
      "c.end_reason",
      "c.message_count",
      "c.model_config as c_model_config",
      "p.id as p_id",
      "p.end_reason as p_end_reason",
      "p.ended_at as p_ended_at",
    ]);
}

function marker(config: string | null, key: string): boolean {
  if (config === null) return false;
  try {
    const parsed: unknown = JSON.parse(config);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return false;
    const value = (parsed as Record<string, unknown>)[key];
    return value !== undefined && value !== null;
  } catch {
    return false;
  }
}

/** The link kind, by the rules of the SQLite store's lineage query. */
function toNode(row: NodeRow): Omit<LineageNode, "depth"> {
  let link: LineageLinkKind | null;
  const startedAfterEnd = row.p_ended_at !== null && row.started_at >= row.p_ended_at;
  if (row.p_id === null) link = null;
  else if (marker(row.c_model_config, "_branched_from")) link = "branch";
  else if (marker(row.c_model_config, "_delegate_from")) link = "delegate";
  else if (row.p_end_reason === "compression" && startedAfterEnd) link = "compression";
  else if (row.p_end_reason === "branched" && startedAfterEnd) link = "branch";
  else if (row.source === "subagent" || row.p_ended_at === null || row.started_at < row.p_ended_at)
    link = "delegate";
  else link = "other";
  return {
    id: row.id,
    parent_session_id: row.parent_session_id,
    title: row.title,
    source: row.source,
    started_at: row.started_at,
    ended_at: row.ended_at,
    end_reason: row.end_reason,
    message_count: row.message_count,
    link,
  };
}

/** Ancestors and descendants of a session with the kind of each link, or `null`. */
export async function getLineage(
  ctx: PgStoreContext,
  id: string,
  o?: { maxDescendants?: number },
): Promise<Lineage | null> {
  const sessionId = requireId("id", id);
  const limit = nonNegativeInt(
    "maxDescendants",
    optionsObject("options", o).maxDescendants,
    10_000,
    1_000_000,
  );
  return ctx.snapshot(async (db) => {
    const node = async (nid: string) =>
      (await nodeQuery(db).where("c.id", "=", nid).executeTakeFirst()) as NodeRow | undefined;
    const self = await node(sessionId);
    if (self === undefined) return null;
    const session: LineageNode = { ...toNode(self), depth: 0 };
    const ancestors: LineageNode[] = [];
    const seen = new Set<string>([sessionId]);
    let parentId = self.parent_session_id;
    for (let depth = 1; depth <= MAX_LINEAGE_HOPS && parentId !== null && !seen.has(parentId); depth++) {
      const row = await node(parentId);
      if (row === undefined) break;
      seen.add(row.id);
      ancestors.push({ ...toNode(row), depth });
      parentId = row.parent_session_id;
    }
    ancestors.reverse();
    // Descendants breadth first by a recursive CTE (UNION stops at cycles).
    const rows = (
      await sql<NodeRow & { depth: number }>`WITH RECURSIVE tree(id, depth) AS (
           SELECT id, 1 FROM sessions WHERE parent_session_id = ${sessionId}
           UNION
           SELECT s.id, t.depth + 1 FROM sessions s JOIN tree t ON s.parent_session_id = t.id
           WHERE t.depth < ${MAX_LINEAGE_HOPS}
         )
         SELECT ${sql.raw(NODE_FIELDS)}, t.depth AS depth FROM tree t
           JOIN sessions c ON c.id = t.id LEFT JOIN sessions p ON p.id = c.parent_session_id
         ORDER BY t.depth, c.started_at, c.id COLLATE "C" LIMIT ${limit + seen.size}`.execute(db)
    ).rows;
    const descendants: LineageNode[] = [];
    const inTree = new Set<string>([sessionId]);
    for (const row of rows) {
      if (inTree.has(row.id) || descendants.length >= limit) continue;
      inTree.add(row.id);
      descendants.push({ ...toNode(row), depth: row.depth });
    }
    return { session, root_id: ancestors[0]?.id ?? sessionId, ancestors, descendants };
  });
}
