import {
  InvalidArgumentError,
  optionsObject as options,
  type SearchHit,
  type SearchMessagesOptions,
} from "@hermes/core";
import { type SearchIndexProgress, type SearchIndexReport, substringExcerpt } from "@hermes/search";
import { sql } from "kysely";
import { anyText, collateC } from "../pg-database.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { fts5Snippet } from "../search/fts5-compat.js";
import { searchTokenCount, searchTrigramCount, searchVectorLiteral } from "../search/pg-search-text.js";
import { searchArguments } from "../search/search-arguments.js";
import { searchContexts } from "../search/search-contexts.js";
import { searchQuery } from "../search/search-query.js";
import { messageCount } from "./sessions.js";

/**
 * Full-text search with the SQLite store's syntax and rules: words through the `tsvector`
 * GIN index (ranked, `>>>`/`<<<` snippets), CJK through substring search on the pg_trgm
 * GIN index (newest first, 120-character excerpts).
 */
export async function searchMessages(
  ctx: PgStoreContext,
  query: string,
  o?: SearchMessagesOptions,
): Promise<SearchHit[]> {
  const { plan, sourceFilter, excludeSources, roleFilter, limit, offset } = searchArguments(query, o);
  if (plan.kind === "empty") return [];
  if (sourceFilter !== null && sourceFilter.length === 0) return [];
  ctx.check();

  const built = await ctx.read((db) => searchQuery(ctx.corpus, db, query, plan));
  if (built === null) return [];
  return ctx.read(async (db) => {
    const rows = await db
      .selectFrom("messages as m")
      .innerJoin("sessions as s", "s.id", "m.session_id")
      .$if(built.lateral.length > 0, (qb) =>
        // Each term's frequency in the row, computed once: an aggregate over the unnested
        // vector (count(*) keeps it one for a vector cut down to nothing), whose phrase
        // columns are functions of the row evaluated in that single result row.
        qb.innerJoinLateral(
          db
            .selectFrom(sql`unnest(${built.lateralVector})`.as("u"))
            .select([sql<number>`count(*)`.as("lexemes"), ...built.lateral.map((f, i) => f.as(`f${i}`))])
            .as("fq"),
          (join) => join.onTrue(),
        ),
      )
      .select([
        "m.id",
        "m.session_id",
        "m.role",
        "m.content",
        "m.tool_calls",
        "m.timestamp",
        "m.tool_name",
        "s.source",
        "s.model",
        "s.started_at as session_started",
      ])
      .where(built.where)
      .$if(sourceFilter !== null, (qb) => qb.where("s.source", "=", anyText(sourceFilter!)))
      .$if(excludeSources !== null && excludeSources.length > 0, (qb) =>
        qb.where(sql<boolean>`NOT (s.source = ${anyText(excludeSources!)})`),
      )
      .$if(roleFilter !== null && roleFilter.length > 0, (qb) =>
        qb.where("m.role", "=", anyText(roleFilter!)),
      )
      .$if(built.score !== null, (qb) =>
        qb.select(built.score!.as("score")).orderBy(sql.ref("score"), "desc").orderBy("m.id"),
      )
      // Substring (CJK) matches come newest first; ties as the SQLite store orders them (the
      // reference's own plan): by id ascending, or with a source filter by source, then id
      // descending (SQLite also orders by the session's rowid there, which PostgreSQL lacks).
      .$if(built.score === null && sourceFilter === null, (qb) =>
        qb.orderBy("m.timestamp", "desc").orderBy("m.id", "asc"),
      )
      .$if(built.score === null && sourceFilter !== null, (qb) =>
        qb.orderBy("m.timestamp", "desc").orderBy(collateC("s.source")).orderBy("m.id", "desc"),
      )
      .limit(limit)
      .offset(offset)
      .execute();
    const contexts = await searchContexts(
      db,
      rows.map((r) => r.id),
    );
    return rows.map((row, i) => {
      const columns = [row.content, row.tool_calls, row.tool_name];
      const snippet =
        built.ranked !== null
          ? fts5Snippet(columns, built.ranked.phrases, built.ranked.tokenize)
          : substringExcerpt(columns, built.needles);
      return {
        id: row.id,
        session_id: row.session_id,
        role: row.role,
        snippet,
        timestamp: row.timestamp,
        tool_name: row.tool_name,
        source: row.source,
        model: row.model,
        session_started: row.session_started,
        context: contexts[i] ?? [],
      };
    });
  });
}

/** State of the search index: rows whose `search_vector` is missing count as damage. */
export async function verifySearchIndex(ctx: PgStoreContext): Promise<SearchIndexReport> {
  return ctx.read(async (db) => {
    const missing =
      (
        await db
          .selectFrom("messages")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("search_vector", "is", null)
          .executeTakeFirst()
      )?.n ?? 0;
    const indexes = (
      await sql<{ indexname: string }>`SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()
        AND indexname IN ('idx_messages_search_vector', 'idx_messages_search_trgm')`.execute(db)
    ).rows.map((r) => r.indexname);
    const status = (name: string, kind: "unicode61" | "trigram") => {
      if (!indexes.includes(name))
        return { name, kind, status: "missing" as const, detail: `index ${name} does not exist` };
      if (kind === "unicode61" && missing > 0)
        return {
          name,
          kind,
          status: "damaged" as const,
          detail: `${missing} messages have no search vector`,
        };
      return { name, kind, status: "ok" as const };
    };
    const list = [
      status("idx_messages_search_vector", "unicode61"),
      status("idx_messages_search_trgm", "trigram"),
    ];
    return { ok: list.every((s) => s.status === "ok"), indexes: list };
  });
}

/** Recomputes every message's search vector, in transactions of 1,000 messages. */
export async function rebuildSearchIndex(
  ctx: PgStoreContext,
  o?: { onProgress?: (progress: SearchIndexProgress) => void },
): Promise<void> {
  const opts = options("options", o);
  if (opts.onProgress !== undefined && typeof opts.onProgress !== "function") {
    throw new InvalidArgumentError("onProgress", "onProgress must be a function");
  }
  const total = await messageCount(ctx);
  let after = 0;
  let done = 0;
  for (;;) {
    const n = await ctx.write(async (db) => {
      const rows = await db
        .selectFrom("messages")
        .select(["id", "content", "tool_calls", "tool_name"])
        .where("id", ">", after)
        .orderBy("id")
        .limit(1000)
        .execute();
      for (const r of rows) {
        await db
          .updateTable("messages")
          .set({
            search_vector: sql<string>`${searchVectorLiteral(r.content, r.tool_calls, r.tool_name)}::tsvector`,
            search_tokens: searchTokenCount(r.content, r.tool_calls, r.tool_name),
            search_trigrams: searchTrigramCount(r.content, r.tool_calls, r.tool_name),
          })
          .where("id", "=", r.id)
          .execute();
      }
      if (rows.length > 0) after = rows[rows.length - 1]!.id;
      return rows.length;
    });
    done += n;
    opts.onProgress?.({ index: "idx_messages_search_vector", done, total });
    if (n < 1000) return;
  }
}
