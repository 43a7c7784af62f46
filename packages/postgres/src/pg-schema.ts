import { sql } from "kysely";
import { migrationStatements, type PgMigration, type PgServerFeatures } from "./migrations/pg-migration.js";
import { v06SplitWordIndex } from "./migrations/v06-split-word-index.js";
import { v07GramRowTrigger } from "./migrations/v07-gram-row-trigger.js";
import { CJK_RECENT_INDEX_SQL, v08CjkRecentIndex } from "./migrations/v08-cjk-recent-index.js";
import { v09TrigramRanges } from "./migrations/v09-trigram-ranges.js";
import { v10AgentReadModel } from "./migrations/v10-agent-read-model.js";
import type { PgDb } from "./pg-database.js";
import { createExtensions, ensureRum } from "./pg-extensions.js";
import { searchDocumentSql } from "./search/search-document.js";

/**
 * pg_trgm's index of the searched text (substring terms of three characters or more) over the
 * whole table: the GIN layout's (v9 gives the split layout one per sealed range instead).
 */
const TRGM_INDEX_SQL = `CREATE INDEX IF NOT EXISTS idx_messages_search_trgm ON messages USING gin (
  ${searchDocumentSql()} public.gin_trgm_ops)`;

/** The GIN layout's word index (no RUM on the server): the matches selected, then sorted. */
const GIN_WORD_INDEX_SQL =
  "CREATE INDEX IF NOT EXISTS idx_messages_search_vector ON messages USING gin (search_vector)";

/**
 * The search indexes of the current schema but the split layout's (with RUM: its ranges' word
 * and trigram indexes are made from its registry, see `search/word-ranges.ts`): without RUM
 * the GIN word index and pg_trgm's over the whole table; the gram vector's index and the
 * newest CJK messages' (v8) on both.
 */
export function searchIndexStatements(features: PgServerFeatures): string[] {
  return [
    ...(features.rum ? [] : [GIN_WORD_INDEX_SQL, TRGM_INDEX_SQL]),
    GRAM_INDEX_SQL,
    CJK_RECENT_INDEX_SQL,
  ];
}

/**
 * v4's btree of the side table `message_grams`: one row per (gram, message) of `search_grams`,
 * keyed `(gram, timestamp DESC, message_id)`, kept by triggers (v7 made the insert one a row
 * trigger). v8 drops the table and its triggers (`migrations/v08-cjk-recent-index.ts`).
 */
const MESSAGE_GRAMS_INDEX_SQL = `CREATE INDEX IF NOT EXISTS idx_message_grams
  ON message_grams (gram, timestamp DESC, message_id)`;

/** The side table of short-CJK grams and the triggers that kept it in step with `messages` (v4). */
const MESSAGE_GRAMS_SQL = [
  `CREATE TABLE IF NOT EXISTS message_grams (
    gram text COLLATE "C" NOT NULL,
    timestamp double precision NOT NULL,
    message_id bigint NOT NULL)`,
  // The functions keep the schema they were made in whatever the writer's search_path.
  `CREATE OR REPLACE FUNCTION hermes_message_grams_insert() RETURNS trigger LANGUAGE plpgsql
   SET search_path FROM CURRENT AS $fn$
   BEGIN
     INSERT INTO message_grams (gram, timestamp, message_id)
       SELECT l, n.timestamp, n.id FROM hermes_new n, unnest(tsvector_to_array(n.search_grams)) AS l
       WHERE n.search_grams <> ''::tsvector;
     RETURN NULL;
   END $fn$`,
  `CREATE OR REPLACE FUNCTION hermes_message_grams_delete() RETURNS trigger LANGUAGE plpgsql
   SET search_path FROM CURRENT AS $fn$
   BEGIN
     DELETE FROM message_grams g USING hermes_old o, unnest(tsvector_to_array(o.search_grams)) AS l
       WHERE o.search_grams <> ''::tsvector AND g.gram = l AND g.timestamp = o.timestamp
         AND g.message_id = o.id;
     RETURN NULL;
   END $fn$`,
  `CREATE OR REPLACE FUNCTION hermes_message_grams_update() RETURNS trigger LANGUAGE plpgsql
   SET search_path FROM CURRENT AS $fn$
   BEGIN
     DELETE FROM message_grams g USING hermes_old o JOIN hermes_new n ON n.id = o.id,
         unnest(tsvector_to_array(o.search_grams)) AS l
       WHERE (o.search_grams, o.timestamp) IS DISTINCT FROM (n.search_grams, n.timestamp)
         AND g.gram = l AND g.timestamp = o.timestamp AND g.message_id = o.id;
     INSERT INTO message_grams (gram, timestamp, message_id)
       SELECT l, n.timestamp, n.id FROM hermes_old o JOIN hermes_new n ON n.id = o.id,
         unnest(tsvector_to_array(n.search_grams)) AS l
       WHERE (o.search_grams, o.timestamp) IS DISTINCT FROM (n.search_grams, n.timestamp);
     RETURN NULL;
   END $fn$`,
  // DROP then CREATE: CREATE OR REPLACE TRIGGER needs PostgreSQL 14.
  "DROP TRIGGER IF EXISTS hermes_message_grams_insert ON messages",
  "DROP TRIGGER IF EXISTS hermes_message_grams_delete ON messages",
  "DROP TRIGGER IF EXISTS hermes_message_grams_update ON messages",
  `CREATE TRIGGER hermes_message_grams_insert AFTER INSERT ON messages
   REFERENCING NEW TABLE AS hermes_new FOR EACH STATEMENT EXECUTE FUNCTION hermes_message_grams_insert()`,
  `CREATE TRIGGER hermes_message_grams_delete AFTER DELETE ON messages
   REFERENCING OLD TABLE AS hermes_old FOR EACH STATEMENT EXECUTE FUNCTION hermes_message_grams_delete()`,
  `CREATE TRIGGER hermes_message_grams_update AFTER UPDATE ON messages
   REFERENCING OLD TABLE AS hermes_old NEW TABLE AS hermes_new FOR EACH STATEMENT
   EXECUTE FUNCTION hermes_message_grams_update()`,
];

/** Fills v4's `message_grams` from every message's `search_grams`. */
const MESSAGE_GRAMS_BACKFILL_SQL = `INSERT INTO message_grams (gram, timestamp, message_id)
  SELECT l, m.timestamp, m.id FROM messages m, unnest(tsvector_to_array(m.search_grams)) AS l
  WHERE m.search_grams <> ''::tsvector`;

/**
 * The gram index holds messages with CJK only (partial; queries state the predicate, see
 * `substringCondition`), and is a GIN index on every server: it selects a CJK query's matches
 * (newest-first pages may walk `idx_messages_cjk_recent` instead), and GIN's pending list makes
 * an append's entries cheap where RUM's wrote a third of an append's WAL.
 */
export const GRAMS_PRESENT = "search_grams <> ''::tsvector";

const GRAM_INDEX_SQL = `CREATE INDEX IF NOT EXISTS idx_messages_search_grams ON messages USING gin (search_grams)
  WHERE ${GRAMS_PRESENT}`;

/** v3's word index, as v3 made it (v6 splits it where RUM is installed). */
function v3WordIndex(features: PgServerFeatures): string {
  return features.rum
    ? "CREATE INDEX IF NOT EXISTS idx_messages_search_vector ON messages USING rum (search_vector public.rum_tsvector_ops)"
    : GIN_WORD_INDEX_SQL;
}

/**
 * The PostgreSQL schema, step by step. Same tables and columns as `state.db` v11 (timestamps as
 * `double precision` epoch seconds, counters as `bigint`), plus the search columns and indexes.
 */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: "core tables",
    sql: [
      `CREATE TABLE IF NOT EXISTS sessions (
        id text PRIMARY KEY,
        source text NOT NULL,
        user_id text,
        model text,
        model_config text,
        system_prompt text,
        parent_session_id text REFERENCES sessions(id),
        started_at double precision NOT NULL,
        ended_at double precision,
        end_reason text,
        message_count bigint DEFAULT 0,
        tool_call_count bigint DEFAULT 0,
        input_tokens bigint DEFAULT 0,
        output_tokens bigint DEFAULT 0,
        cache_read_tokens bigint DEFAULT 0,
        cache_write_tokens bigint DEFAULT 0,
        reasoning_tokens bigint DEFAULT 0,
        billing_provider text,
        billing_base_url text,
        billing_mode text,
        estimated_cost_usd double precision,
        actual_cost_usd double precision,
        cost_status text,
        cost_source text,
        pricing_version text,
        title text,
        api_call_count bigint DEFAULT 0
      )`,
      `CREATE TABLE IF NOT EXISTS messages (
        id bigserial PRIMARY KEY,
        session_id text NOT NULL REFERENCES sessions(id),
        role text NOT NULL,
        content text,
        tool_call_id text,
        tool_calls text,
        tool_name text,
        timestamp double precision NOT NULL,
        token_count bigint,
        finish_reason text,
        reasoning text,
        reasoning_content text,
        reasoning_details text,
        codex_reasoning_items text,
        codex_message_items text
      )`,
      "CREATE TABLE IF NOT EXISTS state_meta (key text PRIMARY KEY, value text)",
      "CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source)",
      "CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id, started_at)",
      "CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC, id)",
      "CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp, id)",
      "CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL",
      // Prefix lookups of ids and titles (`LIKE 'x%'`) in any collation.
      "CREATE INDEX IF NOT EXISTS idx_sessions_id_pattern ON sessions(id text_pattern_ops)",
      "CREATE INDEX IF NOT EXISTS idx_sessions_title_pattern ON sessions(title text_pattern_ops)",
    ],
  },
  {
    version: 2,
    name: "search: tsvector (GIN) for words, pg_trgm (GIN) for CJK and substrings",
    sql: [
      "ALTER TABLE messages ADD COLUMN IF NOT EXISTS search_vector tsvector",
      // Words of the message: FTS5's document size in bm25.
      "ALTER TABLE messages ADD COLUMN IF NOT EXISTS search_tokens integer",
      // bm25's corpus size (row count, total words) read by an index-only scan.
      "CREATE INDEX IF NOT EXISTS idx_messages_search_tokens ON messages(search_tokens)",
      // Trigrams of the message (characters - 2 per column): the trigram ranking's document size.
      "ALTER TABLE messages ADD COLUMN IF NOT EXISTS search_trigrams integer",
      "CREATE INDEX IF NOT EXISTS idx_messages_search_trigrams ON messages(search_trigrams)",
      // Occurrences of a phrase (consecutive positions; the last word a prefix when asked) in a
      // message's vector: FTS5's phrase frequency in bm25.
      `CREATE OR REPLACE FUNCTION hermes_phrase_freq(vec tsvector, words text[], prefix boolean)
       RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
         WITH lex AS (SELECT lexeme, positions FROM unnest(vec)),
         firsts AS (
           SELECT DISTINCT p FROM lex, unnest(lex.positions) AS p
           WHERE CASE WHEN prefix AND cardinality(words) = 1 THEN starts_with(lexeme, words[1])
                      ELSE lexeme = words[1] END)
         SELECT count(*)::integer FROM firsts f
         WHERE NOT EXISTS (
           SELECT 1 FROM generate_series(2, cardinality(words)) AS i
           WHERE NOT EXISTS (
             SELECT 1 FROM lex WHERE (f.p + i - 1) = ANY (lex.positions)
               AND CASE WHEN prefix AND i = cardinality(words) THEN starts_with(lexeme, words[i])
                        ELSE lexeme = words[i] END))
       $fn$`,
      "CREATE INDEX IF NOT EXISTS idx_messages_search_vector ON messages USING gin (search_vector)",
      TRGM_INDEX_SQL,
    ],
  },
  {
    version: 3,
    name: "search at scale: CJK grams in their own column, RUM indexes where installed, no bm25 columns",
    sql: (features) => [
      // Messages without CJK hold an empty vector (a constant default: no table rewrite).
      "ALTER TABLE messages ADD COLUMN IF NOT EXISTS search_grams tsvector NOT NULL DEFAULT ''",
      // v2 kept the grams ('~'-marked lexemes) in the word vector: moved over, on those rows only.
      `UPDATE messages SET
         search_grams = array_to_tsvector(ARRAY(
           SELECT l FROM unnest(tsvector_to_array(search_vector)) AS l WHERE starts_with(l, '~'))),
         search_vector = ts_delete(search_vector, ARRAY(
           SELECT l FROM unnest(tsvector_to_array(search_vector)) AS l WHERE starts_with(l, '~')))
       WHERE search_vector @@ '''~'':*'::tsquery`,
      "DROP INDEX IF EXISTS idx_messages_search_tokens",
      "DROP INDEX IF EXISTS idx_messages_search_trigrams",
      "ALTER TABLE messages DROP COLUMN IF EXISTS search_tokens",
      "ALTER TABLE messages DROP COLUMN IF EXISTS search_trigrams",
      "DROP FUNCTION IF EXISTS hermes_phrase_freq(tsvector, text[], boolean)",
      // v2's GIN word index is replaced when RUM is there (same name, the other method).
      ...(features.rum ? ["DROP INDEX IF EXISTS idx_messages_search_vector"] : []),
      v3WordIndex(features),
      // v3's gram index, as v3 made it (v4 replaces it).
      features.rum
        ? `CREATE INDEX IF NOT EXISTS idx_messages_search_grams ON messages
            USING rum (search_grams public.rum_tsvector_addon_ops, timestamp) WITH (attach = 'timestamp', to = 'search_grams')`
        : "CREATE INDEX IF NOT EXISTS idx_messages_search_grams ON messages USING gin (search_grams)",
    ],
  },
  {
    version: 4,
    name: "search at scale: CJK grams in a side table (newest first off a btree), a GIN gram index of CJK rows only",
    sql: [
      ...MESSAGE_GRAMS_SQL,
      // Filled before its index is built (one sort rather than row-by-row inserts).
      MESSAGE_GRAMS_BACKFILL_SQL,
      MESSAGE_GRAMS_INDEX_SQL,
      "ANALYZE message_grams",
      // v3's gram index (RUM where installed) covered every message: rebuilt.
      "DROP INDEX IF EXISTS idx_messages_search_grams",
      GRAM_INDEX_SQL,
    ],
  },
  {
    version: 5,
    name: "sessions page: messages by timestamp (the newest activity read off an index)",
    // `listSessionPage` reads the newest messages and sessions to prove its page
    // (portable/session-page-by-bounds.ts) instead of ordering every chain.
    sql: ["CREATE INDEX IF NOT EXISTS idx_messages_timestamp ON messages (timestamp)"],
  },
  v06SplitWordIndex,
  v07GramRowTrigger,
  v08CjkRecentIndex,
  v09TrigramRanges,
  v10AgentReadModel,
];

/** The newest schema version this package writes. */
export const PG_SCHEMA_VERSION = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;

/** What opening did to the schema (the SQLite store's `MigrationReport` shape). */
export interface PgMigrationReport {
  /** Version found before opening; `null` for an empty schema. */
  readonly fromVersion: number | null;
  readonly toVersion: number | null;
  /** Steps applied by this open (empty when another instance had migrated already). */
  readonly applied: readonly string[];
  readonly warnings: readonly string[];
  /** The schema records a version above ours and was left untouched. */
  readonly newerVersion: boolean;
}

/**
 * Brings the current schema (`search_path`'s first schema) to {@link PG_SCHEMA_VERSION}, in one
 * transaction under a transaction-level advisory lock keyed by the schema name: instances that
 * start together queue on the lock, the first migrates, the others find the work done.
 */
export async function migratePg(db: PgDb): Promise<PgMigrationReport> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtext('hermes-sessions:' || current_schema()))`.execute(trx);
    await createExtensions(trx);
    const features = { rum: await ensureRum(trx) };
    await trx.schema
      .createTable("schema_version")
      .ifNotExists()
      .addColumn("version", "integer", (c) => c.notNull())
      .execute();
    const row = await trx
      .selectFrom("schema_version")
      .select((eb) => eb.fn.max("version").as("version"))
      .executeTakeFirst();
    const from = row?.version ?? 0;
    const applied: string[] = [];
    for (const step of PG_MIGRATIONS) {
      if (step.version <= from) continue;
      // DDL text as written above (CREATE … IF NOT EXISTS, a SQL function): run verbatim.
      for (const statement of migrationStatements(step, features)) await sql.raw(statement).execute(trx);
      applied.push(`v${step.version}: ${step.name}`);
    }
    if (applied.length > 0) {
      await trx.deleteFrom("schema_version").execute();
      await trx.insertInto("schema_version").values({ version: PG_SCHEMA_VERSION }).execute();
    }
    return {
      fromVersion: from === 0 ? null : from,
      toVersion: Math.max(from, PG_SCHEMA_VERSION),
      applied,
      warnings: features.rum ? [] : [RUM_MISSING],
      newerVersion: from > PG_SCHEMA_VERSION,
    };
  });
}

/**
 * What a read-only open finds in the current schema, without creating or changing anything
 * (one read-only transaction): the recorded version, or `null` when the schema holds no store.
 */
export async function inspectPg(db: PgDb): Promise<PgMigrationReport | null> {
  return db
    .transaction()
    .setAccessMode("read only")
    .execute(async (trx) => {
      const exists = await sql<{
        found: string | null;
      }>`SELECT to_regclass('schema_version')::text AS found`.execute(trx);
      if ((exists.rows[0]?.found ?? null) === null) return null;
      const row = await trx
        .selectFrom("schema_version")
        .select((eb) => eb.fn.max("version").as("version"))
        .executeTakeFirst();
      const version = row?.version ?? null;
      if (version === null) return null;
      return {
        fromVersion: version,
        toVersion: version,
        applied: [],
        warnings: [],
        newerVersion: version > PG_SCHEMA_VERSION,
      };
    });
}

/** Why search runs on GIN rather than RUM (the `doctor` note and the migration warning). */
export const RUM_MISSING =
  "the RUM extension is not installed in this database: ranked and CJK search sort every match " +
  "(GIN) instead of reading the top hits off a RUM index; install the server package (e.g. " +
  "Debian's postgresql-15-rum), run CREATE EXTENSION rum as a superuser, then rebuild the search index";
