import type { SessionPageArguments, SessionPageRow } from "@hermes/core";
import type { DatabaseConnection } from "../database-connection.js";
import type { StoreContext } from "../store-context.js";
import { PREVIEW_SQL } from "./session-page-sql.js";

// The full order of an unfiltered sessions page, kept per read-only connection while the file
// is unchanged. A file without our search index (one only the agent writes, served read-only)
// has no bound that proves a page from the newest activity, so each page would order every
// chain again (about a second at 100,000 sessions). `PRAGMA data_version` moves whenever
// another connection commits, and a read-only connection commits nothing itself: an order
// read in a snapshot whose data_version is still the connection's is the file's order now.

/** Every listed session of the file in the page's order, with its chain's figures. */
export interface SessionOrder {
  /** The connection's `PRAGMA data_version` in the snapshot the order was read from. */
  readonly version: number;
  /** The SQL that read it (the file's layout decides which). */
  readonly sql: string;
  readonly rows: readonly SessionOrderRow[];
  /** Every key is a number and every id a string: a cursor can then be found by bisection. */
  readonly comparable: boolean;
}

/** One listed session of a {@link SessionOrder} (the columns of the order's SQL). */
export interface SessionOrderRow {
  id: string;
  started_at: number;
  own: number;
  chain_sessions: number;
  chain_open: number;
  chain_last_active: number;
}

const DATA_VERSION_SQL = "PRAGMA data_version";
// The stored columns and preview of the page's sessions, whose order and figures come from
// the cached order: the same `s.*` and preview as the page's own SQL.
const PAGE_SESSIONS_SQL = `SELECT s.*, ${PREVIEW_SQL("s")} AS preview
  FROM json_each(?) j CROSS JOIN sessions s ON s.id = j.value`;

/** Per connection: the data_version and SQL of its last page, and the order once read at it. */
interface Kept {
  version: number;
  sql: string;
  order: SessionOrder | null;
}
const kept = new WeakMap<DatabaseConnection, Kept>();

/**
 * The order `sql` reads (every listed session, in the page's order) for this connection's
 * snapshot, or `null` when this is the first page at this data_version: reading the whole
 * order costs more than one page's SQL (session-page.md), so it is read at the second page of
 * an unchanged file, and a page after each commit (an agent writing) costs what it did before.
 * Only for a read-only store (whose connection never commits) and inside a read snapshot: the
 * data_version read there is the snapshot's, so the order is tagged with its own version.
 */
export function sessionOrder(ctx: StoreContext, sql: string, params: object): SessionOrder | null {
  const conn = ctx.conn;
  const version = conn.get<{ data_version: number }>(DATA_VERSION_SQL)!.data_version;
  const last = kept.get(conn);
  if (last === undefined || last.version !== version || last.sql !== sql) {
    kept.set(conn, { version, sql, order: null });
    return null;
  }
  if (last.order !== null) return last.order;
  const rows = conn.all<SessionOrderRow>(sql, [params]);
  const comparable = rows.every(
    (r) =>
      typeof r.id === "string" &&
      typeof r.chain_last_active === "number" &&
      !Number.isNaN(r.chain_last_active) &&
      typeof r.started_at === "number" &&
      !Number.isNaN(r.started_at),
  );
  last.order = { version, sql, rows, comparable };
  return last.order;
}

/** SQLite's BINARY order of two strings (their UTF-8 bytes), as `-1`, `0` or `1`. */
function compareBinary(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** Where the rows strictly after the cursor begin, or `null` when the order cannot say exactly. */
function startAfter(order: SessionOrder, after: SessionPageArguments["after"]): number | null {
  if (after === null) return 0;
  const { key, startedAt, id } = after;
  if (!order.comparable || typeof key !== "number" || typeof startedAt !== "number") return null;
  if (Number.isNaN(key) || Number.isNaN(startedAt) || typeof id !== "string") return null;
  // The page's WHERE on the cursor, which holds for a suffix of the order.
  const isAfter = (r: SessionOrderRow) =>
    r.chain_last_active < key ||
    (r.chain_last_active === key &&
      (r.started_at < startedAt || (r.started_at === startedAt && compareBinary(r.id, id) < 0)));
  let lo = 0;
  let hi = order.rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (isAfter(order.rows[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * The rows of an unfiltered page (up to `limit + 1`, in order) from the connection's cached
 * order, as the page's own SQL returns them; `null`, for the caller's SQL to answer, when the
 * order is not read yet at this data_version or a cursor's place in it cannot be found exactly
 * (keys that are not numbers).
 */
export function sessionPageFromOrder(
  ctx: StoreContext,
  a: SessionPageArguments,
  orderSql: string,
  params: object,
): SessionPageRow[] | null {
  const order = sessionOrder(ctx, orderSql, params);
  if (order === null) return null;
  const start = startAfter(order, a.after);
  if (start === null) return null;
  const keys = order.rows.slice(start, start + a.limit + 1);
  const stored = new Map(
    ctx.conn
      .all<Record<string, unknown> & { id: string }>(PAGE_SESSIONS_SQL, [
        JSON.stringify(keys.map((k) => k.id)),
      ])
      .map((s) => [s.id, s]),
  );
  // The order's version is this snapshot's, so every session of it is there; were one missing,
  // the caller's SQL answers rather than a page with a hole.
  if (keys.some((k) => !stored.has(k.id))) return null;
  return keys.map((k) => {
    const { preview, ...columns } = stored.get(k.id)!;
    return {
      ...columns,
      last_active: k.own,
      preview,
      chain_last_active: k.chain_last_active,
      chain_sessions: k.chain_sessions,
      chain_open: k.chain_open,
    } as unknown as SessionPageRow;
  });
}

/** The order this connection keeps, if it read one (for tests: whether a page read it again). */
export function keptSessionOrder(conn: DatabaseConnection): SessionOrder | null {
  return kept.get(conn)?.order ?? null;
}
