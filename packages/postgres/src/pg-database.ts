import { createHash } from "node:crypto";
import type { MessagesTable, SchemaVersionTable, SessionsTable, StateMetaTable } from "@hermes/schema";
import {
  type Generated,
  Kysely,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type RawBuilder,
  sql,
} from "kysely";
import pg from "pg";

/**
 * `messages` on PostgreSQL: the columns of `state.db` plus the search columns the store writes
 * (the `tsvector` goes in as its text literal and is never read back as a value).
 */
export interface PgMessagesTable extends MessagesTable {
  /** The read model's message fields (v10; `MessageViewFields` of `@hermes/core`), NULL when unknown. */
  message_uid: string | null;
  /** JSON text, as the agent's file stores it. */
  absorbed_message_uids: string | null;
  /** JSON text, as the agent's file stores it. */
  tool_call_uids: string | null;
  tool_call_uid: string | null;
  view_state: "active" | "compacted" | "superseded" | null;
  compressed_summary: boolean | null;
  search_vector: string | null;
  /** CJK grams of the message (empty without CJK; see `searchColumns`). */
  search_grams: Generated<string>;
}

/**
 * `sessions` on PostgreSQL: the columns of `state.db` plus the read model's session fields (v10;
 * `SessionViewFields` of `@hermes/core`), NULL when the source had no value.
 */
export interface PgSessionsTable extends SessionsTable {
  pinned: boolean | null;
  archived: boolean | null;
  auto_archived: boolean | null;
  hidden: boolean | null;
  created_source: string | null;
  last_read_at: number | null;
  rewind_count: number | null;
}

/** The Kysely database interface of the PostgreSQL schema (see `PG_MIGRATIONS`). */
export interface PgDatabase {
  sessions: PgSessionsTable;
  messages: PgMessagesTable;
  state_meta: StateMetaTable;
  schema_version: SchemaVersionTable;
}

/** A Kysely instance or transaction on the store's schema. */
export type PgDb = Kysely<PgDatabase>;

// bigint (COUNT, SUM of integers, ids) and numeric come back as JavaScript numbers, as the
// SQLite store returns INTEGER and REAL columns.
const INT8 = 20;
const NUMERIC = 1700;
const TYPES = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as "text");
  },
} as unknown as pg.CustomTypesConfig;

/**
 * Marks a statement the store runs often with the same text (the append): sent as a named
 * prepared statement, parsed and planned once per connection instead of on every call.
 */
export const PREPARED = "/* hermes:prepared */ ";
/**
 * A {@link PREPARED} statement whose plan must read each of its indexes in order: it runs with
 * sequential scans, sorts and incremental sorts disabled (and JIT off, which a disabled plan's
 * cost would trigger; and parallel workers, whose start costs more than such a read). A ranked
 * query over the split word index pages by each range's index order (ties included), which a
 * sequential scan and a bounded sort (chosen on a small or unanalyzed table) would not keep from
 * one page to the next; a CJK term's page among the newest messages walks their index.
 */
export const PREPARED_STEERED = "/* hermes:prepared:steered */ ";
const STEER =
  "SET enable_seqscan = off; SET enable_sort = off; SET enable_incremental_sort = off; SET jit = off; SET max_parallel_workers_per_gather = 0";
const UNSTEER =
  "RESET enable_seqscan; RESET enable_sort; RESET enable_incremental_sort; RESET jit; RESET max_parallel_workers_per_gather";
const preparedNames = new Map<string, string>();
function preparedName(text: string): string {
  let name = preparedNames.get(text);
  if (name === undefined) {
    name = `hermes_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
    preparedNames.set(text, name);
  }
  return name;
}

/**
 * The pool as Kysely's dialect sees it, with the store's type parsers on every query. Set per
 * query (not on the pool) so that a pool the caller passes in keeps its own parsers elsewhere.
 */
function typedPool(pool: pg.Pool, shared: boolean): PostgresPool {
  // One wrapper per pg client: the dialect keys its connections by the client object.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (wrapper === undefined) {
        // Whether this connection's session runs with plan_cache_mode = force_generic_plan,
        // and with the planner steered (see PREPARED_STEERED).
        let generic = false;
        let steering = false;
        wrapper = {
          query: (async (text: string, values: readonly unknown[]) => {
            const steered = text.startsWith(PREPARED_STEERED);
            const prepared = steered || text.startsWith(PREPARED);
            const settings: string[] = [];
            // Prepared statements are planned once (generic plan): left on `auto`, the server
            // re-plans a search each call (its custom plans look cheaper than the generic one,
            // which is the same plan). Other statements with parameters keep custom plans
            // (e.g. LIKE prefixes need the value); parameterless ones are unaffected.
            if (prepared !== generic && (prepared || values.length > 0)) {
              settings.push(prepared ? "SET plan_cache_mode = force_generic_plan" : "RESET plan_cache_mode");
              generic = prepared;
            }
            // Steering holds for the steered statements only (any other is planned as usual).
            if (steered !== steering) {
              settings.push(steered ? STEER : UNSTEER);
              steering = steered;
            }
            // One round trip, and only when the connection changes kind.
            if (settings.length > 0) await client.query(settings.join("; "));
            return client.query({
              text,
              values: values as unknown[],
              types: TYPES,
              ...(prepared ? { name: preparedName(text) } : {}),
            });
          }) as unknown as PostgresPoolClient["query"],
          release: (destroy?: boolean) => {
            // A pool of the caller's gets its connections back as it lent them: the reset is
            // queued on the connection ahead of whatever the caller sends next.
            if (shared && (generic || steering)) {
              client.query(`RESET plan_cache_mode; ${UNSTEER}`).catch(() => {});
              generic = false;
              steering = false;
            }
            client.release(destroy);
          },
        };
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    // The store ends a pool it made itself (never one passed in), and not through Kysely.
    end: async () => {},
  };
}

/**
 * Runs `text` (with `$n` parameters) as a named prepared statement on a connection of `pool`,
 * with the store's type parsers, outside Kysely: for the statement the store runs most (a lone
 * append), where building, compiling and executing it through Kysely cost a third of the
 * app's CPU per call. The connection's session settings are left as they are.
 */
export async function poolQuery<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  text: string,
  values: readonly unknown[],
): Promise<R[]> {
  const result = await pool.query<R>({
    text,
    values: values as unknown[],
    types: TYPES,
    name: preparedName(text),
  });
  return result.rows;
}

/**
 * Kysely on `pool` through its PostgreSQL dialect. `shared`: the pool is the caller's, so a
 * connection goes back with the session settings the store changed (plan cache mode, steering)
 * reset.
 */
export function createPgDb(pool: pg.Pool, o: { shared?: boolean } = {}): PgDb {
  return new Kysely<PgDatabase>({
    dialect: new PostgresDialect({ pool: typedPool(pool, o.shared === true) }),
  });
}

/** `= ANY($1::text[])`'s right side: one array parameter, however many values. */
export function anyText(values: readonly string[]): RawBuilder<string> {
  return sql<string>`ANY(${values}::text[])`;
}

/**
 * `text` as a dollar-quoted SQL literal: the server reads it verbatim (no escapes to get wrong,
 * whatever `standard_conforming_strings` says), its tag one that `text` does not hold.
 */
export function dollarQuoted(text: string): string {
  let tag = "$q$";
  for (let i = 0; `${text}${tag}`.indexOf(tag) !== text.length; i++) tag = `$q${i}$`;
  return `${tag}${text}${tag}`;
}

/**
 * {@link anyText} with the values as literals ({@link dollarQuoted}), for a statement without
 * parameters.
 */
export function anyTextLiteral(values: readonly string[]): RawBuilder<string> {
  return sql<string>`ANY(ARRAY[${sql.raw(values.map(dollarQuoted).join(", "))}]::text[])`;
}

/** Sorts text columns bytewise (as SQLite's BINARY collation) whatever the database's collation. */
export const collateC = (column: string): RawBuilder<string> => sql<string>`${sql.ref(column)} COLLATE "C"`;
