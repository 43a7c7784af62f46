import {
  type ImportCapacity,
  type ImportOutcome,
  type ImportReport,
  type ImportSessionsOptions,
  type ImportSource,
  MESSAGE_COLUMNS,
  MESSAGE_VIEW_COLUMNS,
  type PendingImport,
  type PortableMessage,
  type PortableSession,
  runImport,
  SESSION_COLUMNS,
  SESSION_VIEW_COLUMNS,
  SOURCE_SCHEMA_META_KEY,
} from "@hermes/core";
import type { MessageRow as StoredMessageRow, SessionRow as StoredSessionRow } from "@hermes/schema";
import { sql } from "kysely";
import { noteAgentView } from "../operations/agent-visibility.js";
import type { PgDb } from "../pg-database.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { searchColumns } from "../search/pg-search-text.js";
import { sealedFloor } from "../search/word-ranges.js";

const SESSION_VIEW_NAMES = SESSION_VIEW_COLUMNS.map((c) => c.name);
const SESSION_NAMES = [...SESSION_COLUMNS.map((c) => c.name), ...SESSION_VIEW_NAMES];
const MESSAGE_VIEW_NAMES = MESSAGE_VIEW_COLUMNS.map((c) => c.name);
const MESSAGE_NAMES = [
  ...MESSAGE_COLUMNS.map((c) => c.name).filter((n) => n !== "id"),
  ...MESSAGE_VIEW_NAMES,
];
/** Declared types of the message columns, for the arrays of a multi-row insert. */
const MESSAGE_TYPES: Record<string, string> = {
  session_id: "text",
  role: "text",
  timestamp: "double precision",
  token_count: "bigint",
  compressed_summary: "boolean",
};

/** Every read-model field of the portable format has a column here (schema v10). */
export const PG_IMPORT_CAPACITY: ImportCapacity = {
  sessionFields: new Set(SESSION_VIEW_NAMES),
  messageFields: new Set(MESSAGE_VIEW_NAMES),
};

/** A session a newer agent flags, or with superseded rows: searches must then follow its view. */
function carriesAgentView(s: PortableSession): boolean {
  return (
    s.hidden === true ||
    s.archived === true ||
    s.auto_archived === true ||
    s.messages.some((m) => m.view_state === "superseded")
  );
}

/** A stored or incoming value, with a read-model field's absence and NULL alike. */
const columnValue = (row: Record<string, unknown>, name: string) => row[name] ?? null;

async function sameContent(db: PgDb, stored: Record<string, unknown>, s: PortableSession): Promise<boolean> {
  const incoming = s as unknown as Record<string, unknown>;
  for (const n of SESSION_NAMES) if (columnValue(stored, n) !== columnValue(incoming, n)) return false;
  const rows = (await db
    .selectFrom("messages")
    .select(MESSAGE_NAMES as ReadonlyArray<keyof StoredMessageRow>)
    .where("session_id", "=", s.id)
    .orderBy("timestamp")
    .orderBy("id")
    .execute()) as Array<Record<string, unknown>>;
  if (rows.length !== s.messages.length) return false;
  for (let i = 0; i < rows.length; i++) {
    const m = s.messages[i] as unknown as Record<string, unknown>;
    for (const n of MESSAGE_NAMES) if (columnValue(rows[i]!, n) !== columnValue(m, n)) return false;
  }
  return true;
}

/**
 * What an import unit knows of the word index's sealed ranges: ids at or below `floor` are in
 * one (see `sealedFloor`), and `exclusive()` takes the lock that writing there needs.
 */
interface SealedRanges {
  readonly floor: number;
  exclusive(): Promise<void>;
}

/**
 * Inserts messages keeping their ids where free; other ids (taken, or absent) are renumbered
 * above both the table's and the source's largest id, as the SQLite store does. A kept id in
 * a sealed range is an insert into its RUM index, which must never run beside a scan of it
 * (postgrespro/rum#144): the unit then holds `messages` exclusively (reads wait for it). The
 * id sequence is moved past every id written (never back), so later appends never collide.
 */
async function insertMessages(
  db: PgDb,
  sessionId: string,
  messages: readonly PortableMessage[],
  floor: number,
  sealed: SealedRanges,
) {
  if (messages.length === 0) return;
  const wanted = messages.map((m) => m.id).filter((id): id is number => typeof id === "number");
  const taken = new Set(
    (
      await db
        .selectFrom("messages")
        .select("id")
        .where("id", "=", sql<number>`ANY(${wanted}::bigint[])`)
        .execute()
    ).map((r) => r.id),
  );
  const max =
    (
      await db
        .selectFrom("messages")
        .select((eb) => eb.fn.coalesce(eb.fn.max("id"), sql.lit(0)).as("m"))
        .executeTakeFirst()
    )?.m ?? 0;
  let next = Math.max(max, floor);
  const used = new Set<number>();
  const ids: Array<number | null> = [];
  for (const m of messages) {
    let id: number | null = typeof m.id === "number" && !taken.has(m.id) && !used.has(m.id) ? m.id : null;
    if (id === null && floor > 0) id = ++next;
    if (id !== null) used.add(id);
    ids.push(id);
  }
  if (ids.some((id) => id !== null && id <= sealed.floor)) await sealed.exclusive();
  const rows = messages as unknown as ReadonlyArray<Record<string, unknown>>;
  const search = messages.map((m) => searchColumns(m.content, m.tool_calls, m.tool_name));
  // One INSERT per session, whatever its size: the rows travel as one array per column.
  const arrays = [
    sql`${ids}::bigint[]`,
    ...MESSAGE_NAMES.map(
      (n) =>
        sql`${rows.map((r) => (n === "session_id" ? sessionId : (r[n] ?? null)))}::${sql.raw(MESSAGE_TYPES[n] ?? "text")}[]`,
    ),
    sql`${search.map((c) => c.vector)}::text[]`,
    sql`${search.map((c) => c.grams)}::text[]`,
  ];
  const names = sql.raw(MESSAGE_NAMES.join(", "));
  const fromU = sql.raw(MESSAGE_NAMES.map((n) => `u.${n}`).join(", "));
  await sql`INSERT INTO messages (id, ${names}, search_vector, search_grams)
    SELECT COALESCE(u.id, nextval(pg_get_serial_sequence('messages', 'id'))), ${fromU},
      u.search_vector::tsvector, u.search_grams::tsvector
    FROM unnest(${sql.join(arrays)}) AS u(id, ${names}, search_vector, search_grams)`.execute(db);
  // Never back: a seal's bound is the last id the sequence handed out, and appends must stay above it.
  await sql`SELECT setval(pg_get_serial_sequence('messages', 'id'),
    GREATEST((SELECT COALESCE(MAX(id), 0) FROM messages),
      COALESCE(pg_sequence_last_value(pg_get_serial_sequence('messages', 'id')::regclass), 0), 1))`.execute(
    db,
  );
}

async function writeSession(
  db: PgDb,
  p: PendingImport,
  onConflict: "skip" | "replace",
  floor: number,
  sealed: SealedRanges,
): Promise<ImportOutcome> {
  const { messages, ...columns } = p.session;
  // Every column named: a replaced session's read-model fields absent from the source become NULL.
  const row = { ...columns } as Record<string, unknown>;
  for (const n of SESSION_VIEW_NAMES) row[n] = row[n] ?? null;
  const values = (p.detach ? { ...row, parent_session_id: null } : row) as typeof columns;
  const stored = (await db
    .selectFrom("sessions")
    .select(SESSION_NAMES as ReadonlyArray<keyof StoredSessionRow>)
    .where("id", "=", values.id)
    .executeTakeFirst()) as Record<string, unknown> | undefined;
  if (stored === undefined) {
    await db.insertInto("sessions").values(values).execute();
    await insertMessages(db, values.id, messages, floor, sealed);
    return "imported";
  }
  if (await sameContent(db, stored, { ...values, messages })) return "unchanged";
  if (onConflict === "skip") return "conflict";
  await db.deleteFrom("messages").where("session_id", "=", values.id).execute();
  const { id, ...rest } = values;
  await db.updateTable("sessions").set(rest).where("id", "=", id).execute();
  await insertMessages(db, values.id, messages, floor, sealed);
  return "replaced";
}

/**
 * Records `version` as the newest `schema_version` of the data this store holds (its JSONL
 * exports name it in their header), unless a newer one is recorded.
 */
export async function noteSourceSchema(ctx: PgStoreContext, version: number): Promise<void> {
  await ctx.write(async (db) => {
    await sql`INSERT INTO state_meta (key, value) VALUES (${SOURCE_SCHEMA_META_KEY}, ${String(version)})
      ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
      WHERE state_meta.value IS NULL OR state_meta.value !~ '^[0-9]+$' OR state_meta.value::bigint < EXCLUDED.value::bigint`.execute(
      db,
    );
  });
}

/**
 * Imports sessions from a JSONL file or an iterable with the SQLite store's rules
 * (`@hermes/core`'s `runImport`: validated, parents first, each session whole or not at all,
 * idempotent); each unit of sessions is one transaction of the store's writer.
 */
export async function importSessions(
  ctx: PgStoreContext,
  source: ImportSource,
  o?: ImportSessionsOptions,
): Promise<ImportReport> {
  ctx.check();
  return runImport(
    {
      capacity: PG_IMPORT_CAPACITY,
      noteSourceSchema: (version) => noteSourceSchema(ctx, version),
      exists: async (id) =>
        (await ctx.db.selectFrom("sessions").select("id").where("id", "=", id).executeTakeFirst()) !==
        undefined,
      writeBatch: (batch, { onConflict, idFloor }) =>
        ctx.write(async (db) => {
          // Explicit message ids and the sequence move together: appenders wait for this unit.
          // The lock also excludes a seal's concurrent index builds, so the bound read here holds.
          await sql`LOCK TABLE messages IN SHARE ROW EXCLUSIVE MODE`.execute(db);
          let exclusive = false;
          const sealed: SealedRanges = {
            floor: await sealedFloor(db),
            async exclusive() {
              if (!exclusive) await sql`LOCK TABLE messages IN ACCESS EXCLUSIVE MODE`.execute(db);
              exclusive = true;
            },
          };
          const out: ImportOutcome[] = [];
          for (const p of batch) out.push(await writeSession(db, p, onConflict, idFloor, sealed));
          if (batch.some((p) => carriesAgentView(p.session))) await noteAgentView(db);
          return out;
        }),
    },
    source,
    o,
  );
}
