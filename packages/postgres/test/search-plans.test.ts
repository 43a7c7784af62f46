import { openPostgresSessionStore, type PostgresSessionStore, searchColumns } from "@hermes/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshSchema, serverUrl } from "./helpers/test-stores.js";
import { schemaClient } from "./helpers/word-index.js";

// EXPLAIN-based tests: each query type of the bench's search mix reads `messages` through an
// index, never a sequential scan (asserted on the plan, not on time).

const url = serverUrl();

/** Every node of an `EXPLAIN (FORMAT JSON)` plan. */
function planNodes(node: Record<string, unknown>): Array<Record<string, unknown>> {
  const children = (node.Plans as Array<Record<string, unknown>> | undefined) ?? [];
  return [node, ...children.flatMap(planNodes)];
}

/**
 * Whether a plan's page comes off `idx_messages_cjk_recent` in order: a Limit over a scan of it
 * with no sort between them (a subquery's own scan, such as a bound computed once, aside).
 */
function cjkWalk(plan: Record<string, unknown>): boolean {
  return mainNodes(plan)
    .filter((n) => n["Node Type"] === "Limit")
    .some((limit) => {
      const below = mainNodes(limit);
      return (
        below.some(
          (n) =>
            /Index (Only )?Scan/.test(String(n["Node Type"])) &&
            n["Index Name"] === "idx_messages_cjk_recent",
        ) && !below.some((n) => /Sort/.test(String(n["Node Type"])))
      );
    });
}

/** The nodes of a plan but its subqueries' (init plans and sub plans, e.g. a bound computed once). */
function mainNodes(node: Record<string, unknown>): Array<Record<string, unknown>> {
  const children = ((node.Plans as Array<Record<string, unknown>> | undefined) ?? []).filter(
    (c) => c["Parent Relationship"] !== "InitPlan" && c["Parent Relationship"] !== "SubPlan",
  );
  return [node, ...children.flatMap(mainNodes)];
}

/** Every node of a plan with the nodes above it (nearest last). */
function withAncestors(
  node: Record<string, unknown>,
  above: Array<Record<string, unknown>> = [],
): Array<{ node: Record<string, unknown>; above: Array<Record<string, unknown>> }> {
  const children = (node.Plans as Array<Record<string, unknown>> | undefined) ?? [];
  return [{ node, above }, ...children.flatMap((c) => withAncestors(c, [...above, node]))];
}

/**
 * A ranked statement on the split word index: each sealed range read by an ordered scan of its
 * RUM index under a Limit with no Sort between, the open range through a bitmap of its GIN
 * index, and no sequential scan of `messages` anywhere.
 */
function expectSplitPlan(
  plan: Record<string, unknown>,
  ranges: ReadonlyArray<{ hi: number | null; index_name: string }>,
): void {
  const nodes = withAncestors(plan);
  expect(ranges.length).toBe(3);
  for (const range of ranges) {
    const uses = nodes.filter((n) => n.node["Index Name"] === range.index_name);
    if (range.hi === null) {
      expect(uses.map((u) => u.node["Node Type"])).toEqual(["Bitmap Index Scan"]);
      continue;
    }
    expect(uses.map((u) => [u.node["Node Type"], u.node["Order By"] !== undefined])).toEqual([
      ["Index Scan", true],
    ]);
    const above = uses[0]!.above;
    const limit = above.map((n) => n["Node Type"]).lastIndexOf("Limit");
    expect(limit).toBeGreaterThanOrEqual(0);
    expect(above.slice(limit).some((n) => /Sort/.test(String(n["Node Type"])))).toBe(false);
  }
  expect(
    nodes.filter((n) => n.node["Node Type"] === "Seq Scan" && n.node["Relation Name"] === "messages"),
  ).toEqual([]);
}

describe("query plans of the bench's search mix (40,000 messages, analyzed)", () => {
  const schema = freshSchema();
  let pool: pg.Pool;
  let store: PostgresSessionStore;
  /** The queries the store sends while `capturing` is set. */
  let captured: Array<{ text: string; values: unknown[] }> | null = null;
  /** The word index's ranges after the set-up's seals. */
  let ranges: Array<{ lo: number; hi: number | null; index_name: string }> = [];

  beforeAll(async () => {
    const setup = await openPostgresSessionStore({ connectionString: url, schema });
    await setup.close();
    // 400 distinct texts with the bench mix's kinds of term at different frequencies.
    const words = ["alpha", "beta", "gamma", "delta", "kappa", "sigma", "omega", "lambda", "theta", "zeta"];
    const texts = Array.from({ length: 400 }, (_, i) => {
      const parts = [words[i % 10], words[(i * 7) % 10], `w${i}`];
      if (i % 8 === 0) parts.push("docker");
      if (i % 9 === 0) parts.push("nginx", "redis");
      if (i % 11 === 0) parts.push("connection refused");
      if (i % 6 === 0) parts.push(i % 12 === 0 ? "deploy" : "deployment");
      if (i % 13 === 0) parts.push("chat-send");
      if (i === 77) parts.push("zephyrine");
      if (i % 10 === 3) parts.push("数据库连接池");
      if (i % 10 === 5) parts.push("桂林山水");
      if (i % 10 === 7) parts.push("龙年");
      return parts.join(" ");
    });
    const columns = texts.map((t) => searchColumns(t, null, null));
    const c = await schemaClient(url, schema);
    try {
      await c.query(
        "INSERT INTO sessions (id, source, started_at) SELECT 's' || g, CASE WHEN g % 5 = 0 THEN 'telegram' ELSE 'cli' END, g FROM generate_series(0, 399) g",
      );
      await c.query(
        `INSERT INTO messages (session_id, role, content, timestamp, search_vector, search_grams)
         SELECT 's' || (g % 400), 'user', t.content, 1700000000 + g, t.v::tsvector, t.gr::tsvector
         FROM generate_series(1, 40000) g
         JOIN unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS t(content, v, gr, i) ON t.i = (g * 7919) % 400 + 1`,
        [texts, columns.map((x) => x.vector), columns.map((x) => x.grams)],
      );
      await c.query("ANALYZE sessions, messages");
    } finally {
      await c.end();
    }
    pool = new pg.Pool({ connectionString: url, options: `-c search_path="${schema}",public`, max: 2 });
    // The word index as a store that appended these rows has it: two sealed ranges (RUM), and
    // the newest rows in the open range (GIN).
    const sealing = await openPostgresSessionStore({
      connectionString: url,
      schema,
      wordIndex: { dropDelayMs: 0 },
    });
    try {
      const more = (n: number, from: number) =>
        sealing.appendMessages(
          Array.from({ length: n }, (_, i) => ({
            sessionId: `s${i % 400}`,
            role: "user",
            content: texts[(from + i) % 400]!,
          })),
        );
      await sealing.sealSearchIndex();
      await more(800, 0);
      await sealing.sealSearchIndex();
      await more(800, 800);
    } finally {
      await sealing.close();
    }
    const analyze = await schemaClient(url, schema);
    try {
      await analyze.query("ANALYZE sessions, messages");
      ranges = (
        await analyze.query(
          "SELECT lo::float8 AS lo, hi::float8 AS hi, index_name FROM search_word_ranges ORDER BY lo",
        )
      ).rows;
    } finally {
      await analyze.end();
    }
    pool.on("connect", (conn) => {
      const query = conn.query.bind(conn) as (...args: unknown[]) => unknown;
      (conn as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const config = args[0] as { text?: string; values?: unknown[] };
        if (captured !== null && typeof config === "object" && config.text !== undefined)
          captured.push({ text: config.text, values: config.values ?? [] });
        return query(...args);
      };
    });
    store = await openPostgresSessionStore({ pool });
  });
  afterAll(async () => {
    await store?.close();
    await pool?.end();
  });

  const mix = [
    ["common term", "docker"],
    ["rare term", "zephyrine"],
    ["phrase", '"connection refused"'],
    ["prefix", "deploy*"],
    ["hyphenated", "chat-send"],
    ["OR of five", "docker OR nginx OR redis OR postgres OR kubernetes"],
    ["CJK 3+ chars", "数据库"],
    ["CJK 2 chars", "桂林"],
    ["CJK 1 char", "龙"],
  ] as const;

  it.each(mix)("%s (%s): every query on messages reads an index, none scans the table", async (_, query) => {
    captured = [];
    const hits = await store.searchMessages(query, { limit: 20 });
    const replayed = captured;
    captured = null;
    const sent = replayed.filter(
      (q) => /\bmessages\b/.test(q.text) && /^\s*(\/\*[^*]*\*\/\s*)?(SELECT|WITH)/i.test(q.text),
    );
    expect(hits.length).toBeGreaterThan(0);
    expect(sent.length).toBeGreaterThan(0);
    const c = await schemaClient(url, schema);
    try {
      const indexes = new Set(
        (
          await c.query("SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'messages'", [
            schema,
          ])
        ).rows.map((r) => r.indexname),
      );
      let ordered = 0;
      // Planned as the store's own transaction plans them (its local settings replayed first).
      await c.query("BEGIN");
      for (const q of replayed.filter((x) => /^\s*SELECT set_config/i.test(x.text)))
        await c.query(q.text, q.values);
      for (const q of sent) {
        // A steered statement runs with sequential scans, sorts, incremental sorts, JIT and
        // parallel workers off (pg-database.ts).
        const steered = q.text.startsWith("/* hermes:prepared:steered */");
        if (steered)
          await c.query(
            "SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off; SET LOCAL enable_incremental_sort = off; SET LOCAL jit = off; SET LOCAL max_parallel_workers_per_gather = 0",
          );
        const plan = (await c.query(`EXPLAIN (FORMAT JSON) ${q.text}`, q.values)).rows[0]["QUERY PLAN"][0]
          .Plan;
        const nodes = planNodes(plan);
        if (process.env.PLAN_DEBUG) console.log(query, q.text, JSON.stringify(plan, null, 1));
        const seq = nodes.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "messages");
        expect({ query: q.text, seq }).toEqual({ query: q.text, seq: [] });
        const onMessages = nodes.filter((n) => indexes.has(n["Index Name"] as string));
        expect({ query: q.text, onMessages: onMessages.length > 0 }).toEqual({
          query: q.text,
          onMessages: true,
        });
        // The top hits come off a search index in order (RUM's ordering operators, or the
        // newest messages with CJK off their btree), not a sort.
        ordered += nodes.filter(
          (n) =>
            n["Order By"] !== undefined &&
            /^idx_messages_(search_(vector|grams)|words_\d+_\d+)$/.test(String(n["Index Name"])),
        ).length;
        if (q.text.includes("<=>")) expectSplitPlan(plan, ranges);
        if (cjkWalk(plan)) ordered++;
        if (steered) {
          // And the generic plan, the one the store runs (a prepared statement, planned once).
          await c.query("SET LOCAL plan_cache_mode = force_generic_plan");
          await c.query(`PREPARE hermes_steered AS ${q.text}`);
          const args = q.values.map((v) => (typeof v === "number" ? String(v) : c.escapeLiteral(String(v))));
          const generic = (await c.query(`EXPLAIN (FORMAT JSON) EXECUTE hermes_steered(${args.join(", ")})`))
            .rows[0]["QUERY PLAN"][0].Plan;
          if (q.text.includes("<=>")) expectSplitPlan(generic, ranges);
          else expect({ query: q.text, walk: cjkWalk(generic) }).toEqual({ query: q.text, walk: true });
          await c.query("DEALLOCATE hermes_steered");
          await c.query("RESET plan_cache_mode");
        }
      }
      expect(ordered).toBeGreaterThan(0);
      await c.query("ROLLBACK");
    } finally {
      await c.end();
    }
  });

  // Substring terms beside CJK ones (FTS5's trigram table on SQLite). Since v9 the open range
  // has no trigram index: a page is first sought among the newest messages (a steered walk of
  // `idx_messages_timestamp`), and only when it does not fill there read range by range, each
  // sealed range through its own trigram index, the open one off the primary key.
  it.each([
    ["a common term: the newest messages fill the page", "docker OR 桂林", 1],
    ["a rare one: range by range", "zephyrine OR 壮", 2],
  ] as const)("substring query, %s (%s)", async (_, query, statements) => {
    captured = [];
    const hits = await store.searchMessages(query, { limit: 20 });
    const replayed = captured;
    captured = null;
    const sent = replayed.filter(
      (q) => /\bmessages\b/.test(q.text) && /^\s*(\/\*[^*]*\*\/\s*)?SELECT/i.test(q.text),
    );
    expect(hits.length).toBeGreaterThan(0);
    expect(sent.map((q) => q.text.startsWith("/* hermes:prepared:steered */"))).toEqual(
      statements === 1 ? [true] : [true, false],
    );
    const c = await schemaClient(url, schema);
    try {
      await c.query("BEGIN");
      for (const q of replayed.filter((x) => /^\s*SELECT set_config/i.test(x.text)))
        await c.query(q.text, q.values);
      for (const [i, q] of sent.entries()) {
        let plan: Record<string, unknown>;
        if (i === 0) {
          // Steered and prepared (pg-database.ts): the generic plan, as the store runs it.
          await c.query(
            "SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off; SET LOCAL enable_incremental_sort = off; SET LOCAL jit = off; SET LOCAL max_parallel_workers_per_gather = 0; SET LOCAL plan_cache_mode = force_generic_plan",
          );
          await c.query(`PREPARE hermes_substring AS ${q.text}`);
          const args = q.values.map((v) => (typeof v === "number" ? String(v) : c.escapeLiteral(String(v))));
          plan = (await c.query(`EXPLAIN (FORMAT JSON) EXECUTE hermes_substring(${args.join(", ")})`))
            .rows[0]["QUERY PLAN"][0].Plan;
          await c.query("DEALLOCATE hermes_substring");
          await c.query(
            "RESET enable_seqscan; RESET enable_sort; RESET enable_incremental_sort; RESET jit; RESET max_parallel_workers_per_gather; RESET plan_cache_mode",
          );
        } else
          plan = (await c.query(`EXPLAIN (FORMAT JSON) ${q.text}`, q.values)).rows[0]["QUERY PLAN"][0].Plan;
        if (process.env.PLAN_DEBUG) console.log(query, q.text, JSON.stringify(plan, null, 1));
        const nodes = planNodes(plan);
        expect(
          nodes.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "messages"),
        ).toEqual([]);
        const used = new Set(nodes.map((n) => n["Index Name"]).filter((n) => n !== undefined));
        if (i === 0) {
          // The window of newest messages, read off the timestamp index.
          expect(used.has("idx_messages_timestamp")).toBe(true);
          continue;
        }
        for (const range of ranges.filter((r) => r.hi !== null))
          expect(used.has(`${range.index_name}_trgm`)).toBe(true);
        expect(used.has("messages_pkey")).toBe(true);
        expect(used.has("idx_messages_search_trgm")).toBe(false);
      }
      await c.query("ROLLBACK");
    } finally {
      await c.end();
    }
  });
});
