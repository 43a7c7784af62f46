import { firstCodePoints } from "@hermes/search";
import { sql } from "kysely";
import type { PgDb } from "../pg-database.js";

/**
 * Context of every hit in one query: the previous message of the same session by
 * `(timestamp, id)`, the hit, the next one; contents cut to 200 characters (code points).
 */
export async function searchContexts(
  db: PgDb,
  ids: readonly number[],
): Promise<Array<Array<{ role: string; content: string }>>> {
  if (ids.length === 0) return [];
  try {
    const { rows } = await sql<{
      ord: number;
      prole: string | null;
      pcontent: string | null;
      role: string;
      content: string | null;
      nrole: string | null;
      ncontent: string | null;
    }>`SELECT h.ord, p.role AS prole, left(p.content, 200) AS pcontent, t.role, left(t.content, 200) AS content,
          n.role AS nrole, left(n.content, 200) AS ncontent
       FROM unnest(${ids}::bigint[]) WITH ORDINALITY AS h(id, ord)
       JOIN messages t ON t.id = h.id
       LEFT JOIN LATERAL (SELECT m.role, m.content FROM messages m WHERE m.session_id = t.session_id
           AND (m.timestamp, m.id) < (t.timestamp, t.id) ORDER BY m.timestamp DESC, m.id DESC LIMIT 1) p ON true
       LEFT JOIN LATERAL (SELECT m.role, m.content FROM messages m WHERE m.session_id = t.session_id
           AND (m.timestamp, m.id) > (t.timestamp, t.id) ORDER BY m.timestamp, m.id LIMIT 1) n ON true`.execute(
      db,
    );
    const out: Array<Array<{ role: string; content: string }>> = ids.map(() => []);
    for (const r of rows) {
      const context: Array<{ role: string; content: string }> = [];
      if (r.prole !== null) context.push({ role: r.prole, content: firstCodePoints(r.pcontent ?? "", 200) });
      context.push({ role: r.role, content: firstCodePoints(r.content ?? "", 200) });
      if (r.nrole !== null) context.push({ role: r.nrole, content: firstCodePoints(r.ncontent ?? "", 200) });
      out[r.ord - 1] = context;
    }
    return out;
  } catch {
    return ids.map(() => []);
  }
}
