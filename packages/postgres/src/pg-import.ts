import type { MessageRow as StoredMessageRow } from "@hermes/schema";
import {
  decodeLine,
  ImportInvalidError,
  type ImportReport,
  type ImportSessionsOptions,
  type ImportSource,
  InvalidArgumentError,
  type InvalidImportLine,
  importOptions,
  MESSAGE_COLUMNS,
  type PortableSession,
  PortableValidationError,
  parseJsonlHeader,
  parsePortableSession,
  readLines,
  SESSION_COLUMNS,
} from "@hermes/store";
import { sql } from "kysely";
import type { PgDb } from "./pg-database.js";
import { searchTokenCount, searchTrigramCount, searchVectorLiteral } from "./pg-search-text.js";

/** What the import needs from the store. */
export interface ImportTarget {
  exists(id: string): Promise<boolean>;
  write<T>(fn: (db: PgDb) => Promise<T>): Promise<T>;
}

const BATCH_MESSAGES = 5000;
const BATCH_SESSIONS = 200;
const MAX_REPORTED = 100;

const SESSION_NAMES = SESSION_COLUMNS.map((c) => c.name);
const MESSAGE_NAMES = MESSAGE_COLUMNS.map((c) => c.name).filter((n) => n !== "id");
/** Declared types of the message columns, for the arrays of a multi-row insert. */
const MESSAGE_TYPES: Record<string, string> = {
  session_id: "text",
  role: "text",
  timestamp: "double precision",
  token_count: "bigint",
};

type Outcome = "imported" | "unchanged" | "replaced" | "conflict";
interface Pending {
  readonly session: PortableSession;
  readonly line: number;
  readonly detach: boolean;
}

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
  p: Pending,
  onConflict: "skip" | "replace",
  floor: number,
): Promise<Outcome> {
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

class BatchWriter {
  readonly report: ImportReport = {
    sessionsImported: 0,
    messagesImported: 0,
    sessionsUnchanged: 0,
    sessionsReplaced: 0,
    conflicts: [],
    detached: [],
    invalid: [],
  };
  readonly available = new Set<string>();
  #batch: Pending[] = [];
  #rows = 0;

  constructor(
    private readonly target: ImportTarget,
    private readonly onConflict: "skip" | "replace",
    private readonly idFloor = 0,
  ) {}

  async add(p: Pending): Promise<void> {
    this.#batch.push(p);
    this.#rows += 1 + p.session.messages.length;
    this.available.add(p.session.id);
    if (this.#rows >= BATCH_MESSAGES || this.#batch.length >= BATCH_SESSIONS) await this.flush();
  }

  async flush(): Promise<void> {
    const batch = this.#batch;
    if (batch.length === 0) return;
    this.#batch = [];
    this.#rows = 0;
    const outcomes = await this.target.write(async (db) => {
      // Explicit message ids and the sequence move together: appenders wait for this unit.
      await sql`LOCK TABLE messages IN SHARE ROW EXCLUSIVE MODE`.execute(db);
      const out: Outcome[] = [];
      for (const p of batch) out.push(await writeSession(db, p, this.onConflict, this.idFloor));
      return out;
    });
    const r = this.report;
    outcomes.forEach((outcome, i) => {
      const p = batch[i]!;
      if (p.detach) r.detached.push({ id: p.session.id, line: p.line });
      if (outcome === "imported" || outcome === "replaced") {
        if (outcome === "imported") r.sessionsImported++;
        else r.sessionsReplaced++;
        r.messagesImported += p.session.messages.length;
      } else if (outcome === "unchanged") r.sessionsUnchanged++;
      else r.conflicts.push({ id: p.session.id, line: p.line });
    });
  }
}

/**
 * Imports sessions into PostgreSQL with the SQLite store's rules (see `@hermes/store`
 * `importSessions`): each session whole or not at all, parents first, idempotent.
 * A file is validated whole first (nothing written when a line is bad and `onInvalid` is
 * `abort`), then streamed.
 */
export async function importIntoPg(
  target: ImportTarget,
  source: ImportSource,
  o?: ImportSessionsOptions,
): Promise<ImportReport> {
  const opts = importOptions(o);
  if (typeof source === "string") {
    if (source.length === 0 || source.includes("\0")) {
      throw new InvalidArgumentError("source", "source must be a JSONL file path or an iterable of sessions");
    }
    return importFile(target, source, opts);
  }
  if (
    typeof source !== "object" ||
    source === null ||
    (typeof (source as AsyncIterable<unknown>)[Symbol.asyncIterator] !== "function" &&
      typeof (source as Iterable<unknown>)[Symbol.iterator] !== "function")
  ) {
    throw new InvalidArgumentError("source", "source must be a JSONL file path or an iterable of sessions");
  }
  return importIterable(target, source, opts, 0, []);
}

async function importFile(
  target: ImportTarget,
  path: string,
  opts: Required<ImportSessionsOptions>,
): Promise<ImportReport> {
  const invalid: InvalidImportLine[] = [];
  let sawHeader = false;
  let maxMessageId = 0;
  const ids = new Map<string, number>();
  try {
    for await (const { line, bytes } of readLines(path)) {
      if (bytes.every((b) => b === 32 || b === 9 || b === 13)) continue;
      try {
        const value = decodeLine(bytes);
        if (!sawHeader) {
          if (line !== 1) throw new PortableValidationError("the first line must be the header");
          parseJsonlHeader(value);
          sawHeader = true;
          continue;
        }
        const s = parsePortableSession(value);
        const other = ids.get(s.id);
        if (other !== undefined)
          throw new PortableValidationError(`session ${s.id} already appears on line ${other}`);
        ids.set(s.id, line);
        for (const m of s.messages) if (m.id !== null && m.id > maxMessageId) maxMessageId = m.id;
      } catch (error) {
        if (!(error instanceof PortableValidationError)) throw error;
        invalid.push({ line, message: error.message });
        if (!sawHeader) break;
      }
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EISDIR" || code === "EACCES") {
      throw new InvalidArgumentError("source", `cannot read ${path} (${code})`);
    }
    throw error;
  }
  if (!sawHeader && invalid.length === 0)
    invalid.push({ line: 1, message: "the file is empty: the first line must be the header" });
  if (invalid.length > 0 && (opts.onInvalid === "abort" || !sawHeader)) {
    throw new ImportInvalidError(invalid.slice(0, MAX_REPORTED), invalid.length);
  }
  const bad = new Set(invalid.map((i) => i.line));
  async function* sessions() {
    let first = true;
    for await (const { line, bytes } of readLines(path)) {
      if (bytes.every((b) => b === 32 || b === 9 || b === 13)) continue;
      if (first) {
        first = false;
        continue;
      }
      if (bad.has(line)) continue;
      yield { line, value: decodeLine(bytes) };
    }
  }
  return importIterable(target, sessions(), opts, maxMessageId, invalid, true);
}

async function importIterable(
  target: ImportTarget,
  source: AsyncIterable<unknown> | Iterable<unknown>,
  opts: Required<ImportSessionsOptions>,
  idFloor: number,
  earlier: InvalidImportLine[],
  numbered = false,
): Promise<ImportReport> {
  const writer = new BatchWriter(target, opts.onConflict, idFloor);
  const invalid: InvalidImportLine[] = [...earlier];
  const waiting = new Map<string, Pending[]>();
  const seen = new Set<string>();
  const exists = async (id: string) => writer.available.has(id) || (await target.exists(id));
  const fail = async (line: number, message: string) => {
    if (opts.onInvalid === "abort") {
      await writer.flush();
      throw new ImportInvalidError([{ line, message }], 1, numbered ? undefined : "item");
    }
    invalid.push({ line, message });
  };
  const release = async (p: Pending) => {
    const ready: Pending[] = [p];
    while (ready.length > 0) {
      const next = ready.shift()!;
      await writer.add(next);
      const children = waiting.get(next.session.id);
      if (children !== undefined) {
        waiting.delete(next.session.id);
        ready.push(...children);
      }
    }
  };
  let line = 0;
  for await (const raw of source as AsyncIterable<unknown>) {
    line++;
    let item = raw;
    if (numbered) {
      const n = raw as { line: number; value: unknown };
      line = n.line;
      item = n.value;
    }
    let session: PortableSession;
    try {
      session = parsePortableSession(item);
    } catch (error) {
      if (!(error instanceof PortableValidationError)) throw error;
      await fail(line, error.message);
      continue;
    }
    if (seen.has(session.id)) {
      await fail(line, `session ${session.id} appears twice`);
      continue;
    }
    seen.add(session.id);
    const p: Pending = { session, line, detach: false };
    const parent = session.parent_session_id;
    if (parent !== null && !(await exists(parent))) {
      const list = waiting.get(parent);
      if (list === undefined) waiting.set(parent, [p]);
      else list.push(p);
      continue;
    }
    await release(p);
  }
  if (opts.missingParent === "detach") {
    for (const parent of [...waiting.keys()].filter((id) => !seen.has(id))) {
      const list = waiting.get(parent) ?? [];
      waiting.delete(parent);
      for (const p of list) await release({ ...p, detach: true });
    }
  }
  const left = [...waiting.entries()].flatMap(([parent, list]) => list.map((p) => ({ p, parent })));
  left.sort((a, b) => a.p.line - b.p.line);
  for (const { p, parent } of left) {
    await fail(
      p.line,
      seen.has(parent)
        ? `parent session ${parent} cannot be imported`
        : `parent session ${parent} is neither in the ${numbered ? "file" : "source"} nor in the database`,
    );
  }
  await writer.flush();
  invalid.sort((a, b) => a.line - b.line);
  writer.report.invalid = invalid.slice(0, MAX_REPORTED);
  return writer.report;
}
