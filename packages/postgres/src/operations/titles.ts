import {
  escapeLike,
  lineageBase,
  nextLineageTitle,
  optionalString,
  requireId,
  sanitizeTitle,
  TitleConflictError,
  titleArgument,
} from "@hermes/core";
import type { SessionRow } from "@hermes/schema";
import type { PgDb } from "../pg-database.js";
import { isUniqueViolation } from "../pg-errors.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { SESSION_COLUMNS, sessionReadRow } from "../table-columns.js";

/** Sets (or with `null`/blank, clears) a title; `false` for an unknown session. */
export async function setSessionTitle(
  ctx: PgStoreContext,
  id: string,
  title: string | null,
): Promise<boolean> {
  const sessionId = requireId("id", id);
  const clean = sanitizeTitle(optionalString("title", title));
  return ctx.write(async (db) => {
    if (clean !== null) {
      const holder = await db
        .selectFrom("sessions")
        .select("id")
        .where("title", "=", clean)
        .where("id", "<>", sessionId)
        .limit(1)
        .executeTakeFirst();
      if (holder !== undefined) throw new TitleConflictError(clean, holder.id);
    }
    try {
      const updated = await db
        .updateTable("sessions")
        .set({ title: clean })
        .where("id", "=", sessionId)
        .returning("id")
        .execute();
      return updated.length > 0;
    } catch (error) {
      // Another instance took the title between the check and the update (read outside
      // this transaction, which the violation aborted).
      if (clean !== null && isUniqueViolation(error, "idx_sessions_title_unique")) {
        const holder = await ctx.db
          .selectFrom("sessions")
          .select("id")
          .where("title", "=", clean)
          .executeTakeFirst();
        throw new TitleConflictError(clean, holder?.id ?? "(another session)");
      }
      throw error;
    }
  });
}

/** The title of a session; `null` when it has none or does not exist. */
export async function getSessionTitle(ctx: PgStoreContext, id: string): Promise<string | null> {
  const sid = requireId("id", id);
  return ctx.read(
    async (db) =>
      (await db.selectFrom("sessions").select("title").where("id", "=", sid).executeTakeFirst())?.title ??
      null,
  );
}

/** The session whose title is exactly `title`, or `null`. */
export async function getSessionByTitle(ctx: PgStoreContext, title: string): Promise<SessionRow | null> {
  const exact = titleArgument("title", title);
  return ctx.read(async (db) => {
    const row = await db
      .selectFrom("sessions")
      .select(SESSION_COLUMNS)
      .where("title", "=", exact)
      .executeTakeFirst();
    return row === undefined ? null : (sessionReadRow(row) as unknown as SessionRow);
  });
}

/** Resolves a title to a session id, preferring the newest `<title> #n` continuation. */
export async function resolveSessionByTitle(ctx: PgStoreContext, title: string): Promise<string | null> {
  const text = titleArgument("title", title);
  return ctx.read(async (db) => {
    const variant = await db
      .selectFrom("sessions")
      .select("id")
      .where("title", "ilike", `${escapeLike(text)} #%`)
      .orderBy("started_at", "desc")
      .limit(1)
      .executeTakeFirst();
    if (variant !== undefined) return variant.id;
    return (
      (await db.selectFrom("sessions").select("id").where("title", "=", text).executeTakeFirst())?.id ?? null
    );
  });
}

/** The next title of a lineage (`X` → `X #2`, `X #7` → `X #8`). */
export async function getNextTitleInLineage(ctx: PgStoreContext, baseTitle: string): Promise<string> {
  const title = titleArgument("baseTitle", baseTitle);
  return ctx.read((db) => nextTitleInLineage(db, title));
}

/** The next free title of `title`'s lineage, from the titles stored (see `nextLineageTitle`). */
export async function nextTitleInLineage(db: PgDb, title: string): Promise<string> {
  const base = lineageBase(title);
  const existing = await db
    .selectFrom("sessions")
    .select("title")
    .where((eb) => eb.or([eb("title", "=", base), eb("title", "ilike", `${escapeLike(base)} #%`)]))
    .execute();
  return nextLineageTitle(base, existing);
}
