import {
  escapeLike,
  lineageBase,
  nextLineageTitle,
  optionalString,
  requireId,
  sanitizeTitle,
  TitleConflictError,
  titleArgument,
  toSessionViewFields,
} from "@hermes/core";
import type { SessionRow } from "@hermes/schema";
import { sql } from "kysely";
import { compileQuery, param } from "../prepared-query.js";
import type { StoreContext } from "../store-context.js";

const titleHolderQ = compileQuery<{ title: string; id: string }>((db) =>
  db
    .selectFrom("sessions")
    .select("id")
    .where("title", "=", param("title"))
    .where("id", "!=", param("id"))
    .limit(1),
);

const setTitleQ = compileQuery<{ id: string; title: string | null }>((db) =>
  db
    .updateTable("sessions")
    .set({ title: param("title") })
    .where("id", "=", param("id")),
);

/**
 * Sets a session's title after {@link sanitizeTitle}; a blank title clears it (`NULL`, which
 * any number of sessions may share). Returns `false` when no session has this id.
 *
 * The uniqueness check runs inside the write transaction (so no other writer can take the
 * title in between), before the update, and even for an unknown id, as in the reference.
 * Comparison is exact (case-sensitive); a session may re-set its own title.
 *
 * @throws TitleTooLongError (`TITLE_TOO_LONG`) before any write.
 * @throws TitleConflictError (`TITLE_CONFLICT`) when another session holds the title.
 */
export async function setSessionTitle(ctx: StoreContext, id: string, title: string | null): Promise<boolean> {
  const sessionId = requireId("id", id);
  // Type, size and well-formed UTF-16 first (a lone surrogate would be stored as U+FFFD).
  const clean = sanitizeTitle(optionalString("title", title));
  return ctx.writes.run("setSessionTitle", () => {
    if (clean !== null) {
      const holder = ctx.conn.getOf<{ id: string }, { title: string; id: string }>(titleHolderQ, {
        title: clean,
        id: sessionId,
      });
      if (holder !== undefined) throw new TitleConflictError(clean, holder.id);
    }
    return ctx.conn.runOf(setTitleQ, { id: sessionId, title: clean }).changes > 0;
  });
}

const titleOfQ = compileQuery<{ id: string }>((db) =>
  db.selectFrom("sessions").select("title").where("id", "=", param("id")),
);

/** The title of a session; `null` when it has none or does not exist. */
export function getSessionTitle(ctx: StoreContext, id: string): string | null {
  const row = ctx.conn.getOf<{ title: string | null }, { id: string }>(titleOfQ, { id: requireId("id", id) });
  return row?.title ?? null;
}

const byTitleQ = compileQuery<{ title: string }>((db) =>
  db.selectFrom("sessions").selectAll().where("title", "=", param("title")),
);

/** The session whose title is exactly `title` (not sanitized, case-sensitive), or `null`. */
export function getSessionByTitle(ctx: StoreContext, title: string): SessionRow | null {
  const exact = titleArgument("title", title);
  const row = ctx.conn.getOf<SessionRow, { title: string }>(byTitleQ, { title: exact });
  return row === undefined ? null : toSessionViewFields(row);
}

// `<title> #%`: any suffix after " #", numeric or not, as the reference. SQLite's LIKE is
// case-insensitive for ASCII letters, so "fix build #2" is a variant of "Fix Build".
const newestVariantQ = compileQuery<{ pattern: string }>((db) =>
  db
    .selectFrom("sessions")
    .select("id")
    .where(sql<boolean>`title LIKE ${param("pattern")} ESCAPE '\\'`)
    .orderBy("started_at", "desc")
    .limit(1),
);

/**
 * Resolves a title to a session id, preferring the newest continuation of its lineage: the
 * most recently *started* session titled `<title> #…` wins, even over an exact match; else
 * the exact match; else `null`. The title is not sanitized.
 *
 * @example
 * // sessions "Deploy" (oldest), "Deploy #2", "Deploy #3" (newest)
 * await store.resolveSessionByTitle("Deploy") // id of "Deploy #3"
 */
export function resolveSessionByTitle(ctx: StoreContext, title: string): string | null {
  const text = titleArgument("title", title);
  const variant = ctx.conn.getOf<{ id: string }, { pattern: string }>(newestVariantQ, {
    pattern: `${escapeLike(text)} #%`,
  });
  if (variant !== undefined) return variant.id;
  return getSessionByTitle(ctx, text)?.id ?? null;
}

const lineageTitlesQ = compileQuery<{ base: string; pattern: string }>((db) =>
  db
    .selectFrom("sessions")
    .select("title")
    .where(sql<boolean>`title = ${param("base")} OR title LIKE ${param("pattern")} ESCAPE '\\'`),
);

/**
 * The next title of a lineage: strips one trailing ` #<digits>` to get the base; when no
 * session is titled the base or `<base> #…`, returns the base unchanged; else
 * `<base> #<max + 1>`, where the unnumbered original counts as 1 and gaps are not filled
 * ("#2", "#7" → "#8"). The `=` match is case-sensitive but the `LIKE` match is not for ASCII,
 * as in the reference.
 *
 * @example
 * await store.getNextTitleInLineage("Fix Docker Build #2") // "Fix Docker Build #3"
 */
export function getNextTitleInLineage(ctx: StoreContext, baseTitle: string): string {
  const title = titleArgument("baseTitle", baseTitle);
  const base = lineageBase(title);
  const existing = ctx.conn.allOf<{ title: string | null }, { base: string; pattern: string }>(
    lineageTitlesQ,
    {
      base,
      pattern: `${escapeLike(base)} #%`,
    },
  );
  return nextLineageTitle(base, existing);
}
