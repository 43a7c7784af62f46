import type { SearchMessagesOptions } from "@hermes/core";
import { openPostgresSessionStore, type PostgresSessionStore } from "@hermes/postgres";
import fc from "fast-check";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { dollarQuoted } from "../dist/pg-database.js";
import { ensureExtensions } from "./helpers/extensions.js";
import { freshSchema, serverUrl } from "./helpers/test-stores.js";

const url = serverUrl();
const closing: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c.close();
});

describe("dollar-quoted literals", () => {
  it("reach the server verbatim, whatever the text holds", async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const piece = fc.constantFrom(
        "$",
        "q",
        "0",
        "1",
        "$q$",
        "$q0$",
        "'",
        "''",
        "\\",
        "\\'",
        "龙",
        "桂林",
        " ",
        "~",
        "&",
      );
      await fc.assert(
        fc.asyncProperty(fc.array(fc.oneof(piece, fc.string()), { maxLength: 10 }), async (parts) => {
          const text = parts.join("").replaceAll("\u0000", "");
          const back = (await c.query(`SELECT ${dollarQuoted(text)}::text AS t`)).rows[0].t;
          expect(back).toBe(text);
        }),
        { numRuns: 300 },
      );
    } finally {
      await c.end();
    }
  });
});

describe("a gram query's page in two statements", () => {
  /** Runs before the next rows-by-id statement is sent (once), when set. */
  let beforeRowsById: (() => Promise<void>) | null = null;

  async function storeWithHits(): Promise<{ store: PostgresSessionStore; ids: number[]; schema: string }> {
    await ensureExtensions(url);
    const schema = freshSchema();
    const pool = new pg.Pool({ connectionString: url, options: `-c search_path="${schema}",public`, max: 2 });
    pool.on("connect", (conn) => {
      const query = conn.query.bind(conn) as (...args: unknown[]) => unknown;
      (conn as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const config = args[0] as { text?: string };
        const hook = beforeRowsById;
        if (
          hook !== null &&
          typeof config === "object" &&
          config.text?.includes("WITH ORDINALITY AS k(id, ord)")
        ) {
          beforeRowsById = null;
          return hook().then(() => query(...args));
        }
        return query(...args);
      };
    });
    await pool.query(`CREATE SCHEMA "${schema}"`);
    const store = await openPostgresSessionStore({ pool });
    closing.push({ close: () => pool.end() }, store);
    await store.createSession({ id: "s", source: "cli" });
    const ids: number[] = [];
    for (let i = 0; i < 30; i++)
      ids.push(
        await store.appendMessage({ sessionId: "s", role: "user", content: `第${i}条 龙年 message ${i}` }),
      );
    return { store, ids, schema };
  }

  it("pages newest first, with contexts and filters, as the rows order them", async () => {
    const { store, ids, schema } = await storeWithHits();
    await store.createSession({ id: "t", source: "telegram" });
    const other: number[] = [];
    for (let i = 0; i < 5; i++)
      other.push(await store.appendMessage({ sessionId: "t", role: "assistant", content: `龙 reply ${i}` }));
    // The order spelled out from the rows: newest first, ties by id (by source, then id
    // descending, with a source filter).
    const c = new pg.Client({ connectionString: url, options: `-c search_path="${schema}"` });
    await c.connect();
    const expected = async (where: string, tie: string, limit: number, offset: number) =>
      (
        await c.query(
          `SELECT m.id FROM messages m JOIN sessions s ON s.id = m.session_id
           WHERE m.content LIKE '%龙%' AND ${where} ORDER BY m.timestamp DESC, ${tie} LIMIT $1 OFFSET $2`,
          [limit, offset],
        )
      ).rows.map((r) => Number(r.id));
    try {
      const cases: Array<[SearchMessagesOptions, string, string]> = [
        [{}, "true", "m.id"],
        [{ roleFilter: ["user"] }, "m.role = 'user'", "m.id"],
        [{ sourceFilter: ["telegram", "cli"] }, "true", 's.source COLLATE "C", m.id DESC'],
        [{ excludeSources: ["cli"] }, "s.source <> 'cli'", "m.id"],
        // Filter values are literals of the ids' statement: any text stays a value.
        [{ sourceFilter: ["x$q$y'z\\", "cli"] }, "s.source = 'cli'", 's.source COLLATE "C", m.id DESC'],
      ];
      for (const [filters, where, tie] of cases)
        for (const [limit, offset] of [
          [10, 0],
          [10, 10],
          [7, 28],
        ] as const) {
          const page = await store.searchMessages("龙", { ...filters, limit, offset });
          expect({ filters, offset, ids: page.map((h) => h.id) }).toEqual({
            filters,
            offset,
            ids: await expected(where, tie, limit, offset),
          });
        }
    } finally {
      await c.end();
    }
    const first = await store.searchMessages("龙", { limit: 10 });
    for (const h of first) expect([...ids, ...other]).toContain(h.id);
    expect(first[0]?.context?.some((m) => m.content.includes("龙"))).toBe(true);
    expect(first[0]?.snippet).toContain("龙");
  });

  it("takes the page again in one statement when a hit goes between the two", async () => {
    const { store, ids, schema } = await storeWithHits();
    const expected = (await store.searchMessages("龙", { limit: 10 })).map((h) => h.id);
    // Before the rows-by-id statement runs, the first hit of the page is deleted.
    const victim = expected[0]!;
    let deleted = false;
    beforeRowsById = async () => {
      const other = new pg.Client({ connectionString: url, options: `-c search_path="${schema}"` });
      await other.connect();
      try {
        await other.query("DELETE FROM messages WHERE id = $1", [victim]);
        deleted = true;
      } finally {
        await other.end();
      }
    };
    const page = await store.searchMessages("龙", { limit: 10 });
    expect(deleted).toBe(true);
    const ids2 = page.map((h) => h.id);
    expect(ids2).toHaveLength(10);
    expect(ids2).not.toContain(victim);
    expect(ids2.slice(0, 9)).toEqual(expected.slice(1));
    expect(ids).toContain(ids2[9]);
  });
});
