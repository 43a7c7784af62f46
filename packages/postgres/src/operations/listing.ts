import {
  InvalidArgumentError,
  type ListSessionsRichOptions,
  MAX_LIMIT,
  nonNegativeInt,
  optionalString,
  optionalStringArray,
  optionsObject,
  previewOf,
  type RichSessionRow,
  requireId,
  type SessionWithLastActive,
  sessionFilterArguments,
  TIP_FIELDS,
} from "@hermes/core";
import type { SessionRow } from "@hermes/schema";
import { type ExpressionBuilder, sql } from "kysely";
import { anyText, collateC, type PgDatabase, type PgDb } from "../pg-database.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { S_COLUMNS, sessionReadRow } from "../table-columns.js";
import { listedSession } from "./agent-visibility.js";

type SessionsAsS = ExpressionBuilder<PgDatabase & { s: PgDatabase["sessions"] }, "s">;

/** When a session was last used: its newest message, else its start. */
function lastActive(eb: SessionsAsS) {
  return eb.fn
    .coalesce(
      eb
        .selectFrom("messages as m2")
        .select((e) => e.fn.max("m2.timestamp").as("t"))
        .whereRef("m2.session_id", "=", "s.id"),
      eb.ref("s.started_at"),
    )
    .as("last_active");
}

/** The first user message of the session, newlines as spaces, cut to 63 characters. */
const PREVIEW_RAW = sql<string>`COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, E'\\n', ' '), E'\\r', ' '), 1, 63)
   FROM messages m WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
   ORDER BY m.timestamp, m.id LIMIT 1), '')`;

/** Python-style boolean option. */
function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "boolean") throw new InvalidArgumentError(name, `${name} must be a boolean`);
  return value;
}

type RawRich = SessionRow & { last_active: number; preview: unknown };

/** A listed row with its raw preview cut as `previewOf` does. */
function finishRich(row: RawRich): RichSessionRow {
  (row as unknown as RichSessionRow).preview = previewOf(row.preview);
  return sessionReadRow(row) as unknown as RichSessionRow;
}

/** `includeArchived`/`includeHidden` of a listing (both off by default, as the agent lists). */
function flagOptions(opts: Record<string, unknown>) {
  return {
    includeArchived: flag("includeArchived", opts.includeArchived, false),
    includeHidden: flag("includeHidden", opts.includeHidden, false),
  };
}

/** Sessions with `last_active`, most recently used first. */
export async function searchSessions(
  ctx: PgStoreContext,
  o?: {
    source?: string;
    limit?: number;
    offset?: number;
    includeArchived?: boolean;
    includeHidden?: boolean;
  },
): Promise<SessionWithLastActive[]> {
  const opts = optionsObject("options", o);
  const listed = listedSession("s", flagOptions(opts));
  const source = optionalString("source", opts.source);
  const limit = nonNegativeInt("limit", opts.limit, 20, MAX_LIMIT);
  const offset = nonNegativeInt("offset", opts.offset, 0);
  return ctx.read(async (db) =>
    (
      await db
        .selectFrom("sessions as s")
        .select(S_COLUMNS)
        .select((eb) => lastActive(eb))
        .$if(source !== null && source !== "", (qb) => qb.where("s.source", "=", source!))
        .$if(listed !== null, (qb) => qb.where(listed!))
        .orderBy("last_active", "desc")
        .orderBy("s.started_at", "desc")
        .orderBy(collateC("s.id"), "desc")
        .limit(limit)
        .offset(offset)
        .execute()
    ).map((row) => sessionReadRow(row) as unknown as SessionWithLastActive),
  );
}

/** Sessions for a picker with `last_active` and `preview` (see `SessionStore` of `@hermes/core`). */
export async function listSessionsRich(
  ctx: PgStoreContext,
  o?: ListSessionsRichOptions,
): Promise<RichSessionRow[]> {
  const opts = optionsObject("options", o);
  const source = optionalString("source", opts.source);
  const exclude = optionalStringArray("excludeSources", opts.excludeSources);
  const includeChildren = flag("includeChildren", opts.includeChildren, false);
  const projectTips = flag("projectCompressionTips", opts.projectCompressionTips, true);
  const limit = nonNegativeInt("limit", opts.limit, 20, MAX_LIMIT);
  const offset = nonNegativeInt("offset", opts.offset, 0);
  const listed = listedSession("s", flagOptions(opts));
  const filter = sessionFilterArguments(opts);
  const richQuery = (db: PgDb) =>
    db
      .selectFrom("sessions as s")
      .select(S_COLUMNS)
      .select((eb) => [lastActive(eb), PREVIEW_RAW.as("preview")]);
  return ctx.read(async (db) => {
    const rows = (
      (await richQuery(db)
        .$if(!includeChildren, (qb) =>
          // Roots, and branches started after their parent ended (shown as sessions of their own).
          qb.where((eb) =>
            eb.or([
              eb("s.parent_session_id", "is", null),
              eb.exists(
                eb
                  .selectFrom("sessions as p")
                  .select(sql.lit(1).as("one"))
                  .whereRef("p.id", "=", "s.parent_session_id")
                  .where("p.end_reason", "=", "branched")
                  .whereRef("s.started_at", ">=", "p.ended_at"),
              ),
            ]),
          ),
        )
        .$if(source !== null && source !== "", (qb) => qb.where("s.source", "=", source!))
        .$if(exclude !== null && exclude.length > 0, (qb) =>
          qb.where(sql<boolean>`NOT (s.source = ${anyText(exclude!)})`),
        )
        .$if(listed !== null, (qb) => qb.where(listed!))
        // The filters of `SessionFilterOptions`, as `listSessionPage` applies them.
        .$if(filter.models !== null, (qb) => qb.where(sql<boolean>`s.model = ${anyText(filter.models!)}`))
        .$if(filter.startedAfter !== null, (qb) => qb.where("s.started_at", ">=", filter.startedAfter!))
        .$if(filter.startedBefore !== null, (qb) => qb.where("s.started_at", "<", filter.startedBefore!))
        .$if(filter.titlePattern !== null, (qb) =>
          qb.where(
            sql<boolean>`(lower(s.title) LIKE ${filter.titlePattern} ESCAPE '\\' OR s.id LIKE ${filter.idPattern} ESCAPE '\\')`,
          ),
        )
        .orderBy("s.started_at", "desc")
        .limit(limit)
        .offset(offset)
        .execute()) as RawRich[]
    ).map(finishRich);
    if (!projectTips || includeChildren) return rows;
    const out: RichSessionRow[] = [];
    for (const row of rows) {
      if (row.end_reason !== "compression") {
        out.push(row);
        continue;
      }
      const tipId = await compressionTip(db, row.id);
      if (tipId === row.id) {
        out.push(row);
        continue;
      }
      const raw = (await richQuery(db).where("s.id", "=", tipId).executeTakeFirst()) as RawRich | undefined;
      if (raw === undefined) {
        out.push(row);
        continue;
      }
      const tip = finishRich(raw);
      const merged: Record<string, unknown> = { ...row };
      for (const key of TIP_FIELDS) merged[key] = tip[key];
      merged._lineage_root_id = row.id;
      out.push(merged as unknown as RichSessionRow);
    }
    return out;
  });
}

/** The latest session of `id`'s compression chain. */
export async function getCompressionTip(ctx: PgStoreContext, id: string): Promise<string> {
  const sid = requireId("id", id);
  return ctx.read((db) => compressionTip(db, sid));
}

/** Follows compression children (started after their parent ended) to the latest, at most 100 hops. */
async function compressionTip(db: PgDb, id: string): Promise<string> {
  let current = id;
  for (let hop = 0; hop < 100; hop++) {
    const parent = current;
    const next = await db
      .selectFrom("sessions as c")
      .select("c.id")
      .where("c.parent_session_id", "=", parent)
      .where("c.started_at", ">=", (eb) =>
        eb
          .selectFrom("sessions as p")
          .select("p.ended_at")
          .where("p.id", "=", parent)
          .where("p.end_reason", "=", "compression"),
      )
      .orderBy("c.started_at", "desc")
      .limit(1)
      .executeTakeFirst();
    if (next === undefined) return current;
    current = next.id;
  }
  return current;
}

/** The session a resume of `id` should load (first descendant with messages). */
export async function resolveResumeSessionId(ctx: PgStoreContext, id: string): Promise<string> {
  const start = requireId("id", id);
  return ctx.read(async (db) => {
    const hasMessages = async (sid: string) =>
      (await db
        .selectFrom("messages")
        .select("id")
        .where("session_id", "=", sid)
        .limit(1)
        .executeTakeFirst()) !== undefined;
    if (await hasMessages(start)) return start;
    const seen = new Set([start]);
    let current = start;
    for (let hop = 0; hop < 32; hop++) {
      const child = (
        await db
          .selectFrom("sessions")
          .select("id")
          .where("parent_session_id", "=", current)
          .orderBy("started_at", "desc")
          .orderBy(collateC("id"), "desc")
          .limit(1)
          .executeTakeFirst()
      )?.id;
      if (child === undefined || child === "" || seen.has(child)) return start;
      seen.add(child);
      if (await hasMessages(child)) return child;
      current = child;
    }
    return start;
  });
}
