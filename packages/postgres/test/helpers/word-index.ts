import type { PostgresSessionStore } from "@hermes/postgres";
import pg from "pg";
import { afterEach, expect } from "vitest";

/** A client whose queries run in `schema` (created when missing). */
export async function schemaClient(url: string, schema: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await c.query(`SET search_path = "${schema}", public`);
  return c;
}

/**
 * Opens {@link schemaClient}s on `url`; each is ended after the test that opened it. Call at the
 * top level of a test file (it registers an `afterEach`).
 */
export function clientsEndedAfterEach(url: string): (schema: string) => Promise<pg.Client> {
  const clients: pg.Client[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.end();
  });
  return async (schema) => {
    const c = await schemaClient(url, schema);
    clients.push(c);
    return c;
  };
}

/** One registered range with its index's access method, validity and predicate. */
export interface RangeRow {
  lo: number;
  hi: number | null;
  index: string;
  method: string | null;
  valid: boolean | null;
  predicate: string | null;
}

/** The word index's registry, oldest first, with what each range's index is. */
export async function rangeRows(c: pg.Client): Promise<RangeRow[]> {
  const { rows } = await c.query(
    `SELECT r.lo::float8 AS lo, r.hi::float8 AS hi, r.index_name AS index, a.amname AS method,
        i.indisvalid AS valid, pg_get_expr(i.indpred, i.indrelid) AS predicate
     FROM search_word_ranges r
       LEFT JOIN pg_class ic ON ic.relname = r.index_name AND ic.relnamespace = current_schema()::regnamespace
       LEFT JOIN pg_index i ON i.indexrelid = ic.oid LEFT JOIN pg_am a ON a.oid = ic.relam
     ORDER BY r.lo`,
  );
  return rows;
}

/** The word indexes of `messages` (the split layout's and the GIN layout's), by name, with their method. */
export async function wordIndexes(c: pg.Client): Promise<Record<string, string>> {
  const { rows } = await c.query<{ name: string; method: string }>(
    `SELECT ic.relname AS name, a.amname AS method FROM pg_index i
       JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am a ON a.oid = ic.relam
     WHERE i.indrelid = 'messages'::regclass
       AND (ic.relname LIKE 'idx\\_messages\\_words\\_%' OR ic.relname = 'idx_messages_search_vector')
     ORDER BY 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.method]));
}

/** The trigram indexes of `messages` (the whole table's, the sealed ranges'), with method, validity and predicate. */
export async function trigramIndexes(
  c: pg.Client,
): Promise<Record<string, { method: string; valid: boolean; predicate: string | null }>> {
  const { rows } = await c.query(
    `SELECT ic.relname AS name, a.amname AS method, i.indisvalid AS valid,
        pg_get_expr(i.indpred, i.indrelid) AS predicate
     FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am a ON a.oid = ic.relam
     WHERE i.indrelid = 'messages'::regclass AND pg_get_indexdef(i.indexrelid) LIKE '%gin_trgm_ops%'
     ORDER BY 1`,
  );
  return Object.fromEntries(
    rows.map((r) => [r.name, { method: r.method, valid: r.valid, predicate: r.predicate }]),
  );
}

/**
 * Asserts the split layout is whole: ranges that partition the ids (each starts where the last
 * ended, from 0, the last one open), each with its own valid index (RUM when sealed, GIN when
 * open), each sealed range with its own valid trigram index (v9, same predicate), and no other
 * word or trigram index. Returns the ranges.
 */
export async function expectWholeLayout(c: pg.Client): Promise<RangeRow[]> {
  const ranges = await rangeRows(c);
  expect(ranges.length).toBeGreaterThan(0);
  expect(ranges[0]!.lo).toBe(0);
  ranges.forEach((r, i) => {
    if (i > 0) expect(r.lo).toBe(ranges[i - 1]!.hi);
    const open = i === ranges.length - 1;
    expect({ index: r.index, hi: r.hi === null, method: r.method, valid: r.valid }).toEqual({
      index: r.index,
      hi: open,
      method: open ? "gin" : "rum",
      valid: true,
    });
  });
  const sealed = ranges.filter((r) => r.hi !== null);
  const trigrams = sealed.map((r) => `${r.index}_trgm`);
  expect(Object.keys(await wordIndexes(c)).sort()).toEqual(
    [...ranges.map((r) => r.index), ...trigrams].sort(),
  );
  expect(await trigramIndexes(c)).toEqual(
    Object.fromEntries(
      sealed.map((r) => [`${r.index}_trgm`, { method: "gin", valid: true, predicate: r.predicate }]),
    ),
  );
  return ranges;
}

/** Ids of the messages matching a `tsquery`, by a sequential scan (no index involved). */
export async function matchingIds(c: pg.Client, tsquery: string): Promise<number[]> {
  await c.query("BEGIN");
  try {
    await c.query("SET LOCAL enable_indexscan = off");
    await c.query("SET LOCAL enable_bitmapscan = off");
    const { rows } = await c.query<{ id: number }>(
      "SELECT id::float8 AS id FROM messages WHERE search_vector @@ $1::tsquery ORDER BY id",
      [tsquery],
    );
    return rows.map((r) => r.id);
  } finally {
    await c.query("COMMIT");
  }
}

/** Every hit of a search, page by page (`pageSize` per call), in the order the pages give. */
export async function pagedIds(
  store: PostgresSessionStore,
  query: string,
  pageSize: number,
): Promise<number[]> {
  const out: number[] = [];
  for (let offset = 0; ; offset += pageSize) {
    const page = await store.searchMessages(query, { limit: pageSize, offset });
    out.push(...page.map((h) => h.id));
    if (page.length < pageSize) return out;
  }
}

/** Asserts `ids` holds each of `expected` exactly once, and nothing else. */
export function expectEachOnce(ids: readonly number[], expected: Iterable<number>): void {
  const sorted = [...ids].sort((a, b) => a - b);
  expect(sorted).toEqual([...new Set(expected)].sort((a, b) => a - b));
}

/** md5 of every page of an index (pageinspect): equal before and after means nothing wrote to it. */
export async function indexPagesHash(c: pg.Client, schema: string, index: string): Promise<string> {
  await c.query("CREATE EXTENSION IF NOT EXISTS pageinspect SCHEMA public");
  const name = `"${schema}".${index}`;
  const { rows } = await c.query<{ h: string }>(
    `SELECT md5(string_agg(md5(public.get_raw_page($1::text, b::int)), '' ORDER BY b)) AS h
     FROM generate_series(0, pg_relation_size($1::text::regclass) / current_setting('block_size')::int - 1) AS b`,
    [name],
  );
  return rows[0]!.h;
}
