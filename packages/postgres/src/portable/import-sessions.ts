import {
  type ImportOutcome,
  type ImportReport,
  type ImportSessionsOptions,
  type ImportSource,
  MESSAGE_COLUMNS,
  type PendingImport,
  type PortableSession,
  runImport,
  SESSION_COLUMNS,
} from "@hermes/core";
import type { MessageRow as StoredMessageRow } from "@hermes/schema";
import { sql } from "kysely";
import type { PgDb } from "../pg-database.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { searchTokenCount, searchTrigramCount, searchVectorLiteral } from "../search/pg-search-text.js";

const SESSION_NAMES = SESSION_COLUMNS.map((c) => c.name);
const MESSAGE_NAMES = MESSAGE_COLUMNS.map((c) => c.name).filter((n) => n !== "id");
/** Declared types of the message columns, for the arrays of a multi-row insert. */
const MESSAGE_TYPES: Record<string, string> = {
  session_id: "text",
  role: "text",
  timestamp: "double precision",
  token_count: "bigint",
};

async function sameContent(db: PgDb, stored: Record<string, unknown>, s: PortableSession): Promise<boolean> {
  const incoming = s as unknown as Record<string, unknown>;
  for (const n of SESSION_NAMES) if (stored[n] !== incoming[n]) return false;
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
    for (const n of MESSAGE_NAMES) if (rows[i]![n] !== m[n]) return false;
  }
  return true;
}

/**
 * Inserts messages keeping their ids where free; other ids (taken, or absent) are renumbered
 * above both the table's and the source's largest id, as the SQLite store does. The id
 * sequence is moved past every id written, so later appends never collide.
 */
async function insertMessages(
  db: PgDb,
  sessionId: string,
  messages: readonly StoredMessageRow[],
  floor: number,
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
  const rows = messages as unknown as ReadonlyArray<Record<string, unknown>>;
  // One INSERT per session, whatever its size: the rows travel as one array per column.
  const arrays = [
    sql`${ids}::bigint[]`,
    ...MESSAGE_NAMES.map(
      (n) =>
        sql`${rows.map((r) => (n === "session_id" ? sessionId : (r[n] ?? null)))}::${sql.raw(MESSAGE_TYPES[n] ?? "text")}[]`,
    ),
    sql`${messages.map((m) => searchVectorLiteral(m.content, m.tool_calls, m.tool_name))}::text[]`,
    sql`${messages.map((m) => searchTokenCount(m.content, m.tool_calls, m.tool_name))}::integer[]`,
    sql`${messages.map((m) => searchTrigramCount(m.content, m.tool_calls, m.tool_name))}::integer[]`,
  ];
  const names = sql.raw(MESSAGE_NAMES.join(", "));
  const fromU = sql.raw(MESSAGE_NAMES.map((n) => `u.${n}`).join(", "));
  await sql`INSERT INTO messages (id, ${names}, search_vector, search_tokens, search_trigrams)
    SELECT COALESCE(u.id, nextval(pg_get_serial_sequence('messages', 'id'))), ${fromU},
      u.search_vector::tsvector, u.search_tokens, u.search_trigrams
    FROM unnest(${sql.join(arrays)}) AS u(id, ${names}, search_vector, search_tokens, search_trigrams)`.execute(
    db,
  );
  await sql`SELECT setval(pg_get_serial_sequence('messages', 'id'),
    GREATEST((SELECT COALESCE(MAX(id), 0) FROM messages), 1))`.execute(db);
}

async function writeSession(
  db: PgDb,
  p: PendingImport,
  onConflict: "skip" | "replace",
  floor: number,
): Promise<ImportOutcome> {
  const { messages, ...row } = p.session;
  const values = p.detach ? { ...row, parent_session_id: null } : row;
  const stored = (await db
    .selectFrom("sessions")
    .select(SESSION_NAMES as ReadonlyArray<keyof typeof values>)
    .where("id", "=", values.id)
    .executeTakeFirst()) as Record<string, unknown> | undefined;
  if (stored === undefined) {
    await db.insertInto("sessions").values(values).execute();
    await insertMessages(db, values.id, messages, floor);
    return "imported";
  }
  if (await sameContent(db, stored, { ...values, messages })) return "unchanged";
  if (onConflict === "skip") return "conflict";
  await db.deleteFrom("messages").where("session_id", "=", values.id).execute();
  const { id, ...rest } = values;
  await db.updateTable("sessions").set(rest).where("id", "=", id).execute();
  await insertMessages(db, values.id, messages, floor);
  return "replaced";
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
      exists: async (id) =>
        (await ctx.db.selectFrom("sessions").select("id").where("id", "=", id).executeTakeFirst()) !==
        undefined,
      writeBatch: (batch, { onConflict, idFloor }) =>
        ctx.write(async (db) => {
          // Explicit message ids and the sequence move together: appenders wait for this unit.
          await sql`LOCK TABLE messages IN SHARE ROW EXCLUSIVE MODE`.execute(db);
          const out: ImportOutcome[] = [];
          for (const p of batch) out.push(await writeSession(db, p, onConflict, idFloor));
          return out;
        }),
    },
    source,
    o,
  );
}
