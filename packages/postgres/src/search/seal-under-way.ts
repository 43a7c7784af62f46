import { sql } from "kysely";
import type { PgDb } from "../pg-database.js";
import { SEAL_LOCK_KEY } from "./word-ranges.js";

/** A backend whose transaction a seal's statement waits for. */
export interface SealBlocker {
  readonly pid: number;
  /** `idle in transaction`, `active`, …; `null` where the role may not see other roles' sessions. */
  readonly state: string | null;
  /** How long its transaction has run, in ms (`null` when not visible). */
  readonly transactionMs: number | null;
  readonly application: string | null;
}

/** The backend holding this schema's seal lock (a seal, a rebuild or a layout of the ranges). */
export interface SealUnderWay {
  readonly pid: number;
  /** How long its current statement has run, in ms (`null` between statements). */
  readonly statementMs: number | null;
  /** The statement waits for a lock (a concurrent build waits for older transactions so). */
  readonly waiting: boolean;
  /** Who it waits for (at most 3), oldest transaction first. */
  readonly blockers: readonly SealBlocker[];
}

/**
 * Who holds the seal lock of this schema and what its statement waits for, read from
 * `pg_locks` and `pg_stat_activity`; `null` when nobody holds it. A concurrent index build
 * waits for older snapshots anywhere in the database and for open transactions that used
 * `messages` (a drop for any of them), so one long transaction holds a seal back.
 */
export async function sealUnderWay(db: PgDb): Promise<SealUnderWay | null> {
  // An advisory lock on a bigint key shows its high half as classid, its low half as objid.
  const { rows } = await sql<{
    pid: number;
    statement_ms: number | null;
    waiting: boolean;
    blockers: SealBlocker[] | null;
  }>`WITH k AS (SELECT (${sql.raw(SEAL_LOCK_KEY)})::bigint AS k)
    SELECT a.pid, CASE WHEN a.state = 'active'
        THEN (extract(epoch FROM clock_timestamp() - a.query_start) * 1000)::float8 END AS statement_ms,
      coalesce(a.wait_event_type = 'Lock', false) AS waiting,
      (SELECT json_agg(json_build_object('pid', b.pid, 'state', b.state,
          'transactionMs', (extract(epoch FROM clock_timestamp() - b.xact_start) * 1000)::float8,
          'application', nullif(b.application_name, '')) ORDER BY b.xact_start NULLS LAST)
        FROM (SELECT * FROM pg_stat_activity b WHERE b.pid = ANY (pg_blocking_pids(a.pid))
          ORDER BY b.xact_start NULLS LAST LIMIT 3) AS b) AS blockers
    FROM pg_locks l CROSS JOIN k JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid = ((k.k >> 32) & 4294967295)::oid AND l.objid = (k.k & 4294967295)::oid`.execute(db);
  const row = rows[0];
  if (row === undefined) return null;
  return {
    pid: Number(row.pid),
    statementMs: row.statement_ms === null ? null : Number(row.statement_ms),
    waiting: row.waiting,
    blockers: row.blockers ?? [],
  };
}

/** A duration in ms as text: "12 s", "3 min". */
function duration(ms: number): string {
  return ms < 120_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`;
}

/** The phrase `verifySearchIndex` adds to the word index's detail (see {@link sealUnderWay}). */
export function sealUnderWayText(s: SealUnderWay): string {
  const running = s.statementMs === null ? "" : ` ${duration(s.statementMs)}`;
  if (!s.waiting || s.blockers.length === 0)
    return `a seal of the ranges is under way (backend ${s.pid}${s.statementMs === null ? "" : `, its statement running${running}`})`;
  const who = s.blockers.map((b) => {
    const facts = [
      b.state,
      b.transactionMs === null ? null : `transaction open ${duration(b.transactionMs)}`,
      b.application,
    ].filter((f) => f !== null);
    return `backend ${b.pid}${facts.length > 0 ? ` (${facts.join(", ")})` : ""}`;
  });
  return `a seal of the ranges (backend ${s.pid}) has waited${running} for older transactions of the database to end: ${who.join("; ")}`;
}
