import {
  type ForkSessionOptions,
  forkArguments,
  InvalidArgumentError,
  newSessionId,
  SessionNotFoundError,
  TitleConflictError,
} from "@hermes/core";
import type { SessionRow } from "@hermes/schema";
import { sessionById } from "../operations/sessions.js";
import { nextTitleInLineage } from "../operations/titles.js";
import type { PgStoreContext } from "../pg-store-context.js";
import { MESSAGE_COLUMNS } from "../table-columns.js";

/** Forks a session (messages up to `atMessageId`); returns the new row. */
export async function forkSession(
  ctx: PgStoreContext,
  id: string,
  o?: ForkSessionOptions,
): Promise<SessionRow> {
  const { parentId, at, requestedId, explicitTitle } = forkArguments(id, o);
  return ctx.write(async (db) => {
    const parent = await sessionById(db, parentId);
    if (parent === undefined)
      throw new SessionNotFoundError(parentId, `forkSession: session ${parentId} does not exist`);
    let atT = Number.POSITIVE_INFINITY;
    let atId = Number.MAX_SAFE_INTEGER;
    if (at !== undefined) {
      const row = await db
        .selectFrom("messages")
        .select("timestamp")
        .where("id", "=", at)
        .where("session_id", "=", parentId)
        .executeTakeFirst();
      if (row === undefined) {
        throw new InvalidArgumentError(
          "atMessageId",
          `message ${at} is not a message of session ${parentId}`,
        );
      }
      atT = row.timestamp;
      atId = at;
    }
    const now = ctx.now();
    const newId = requestedId ?? newSessionId(now);
    if (
      (await db.selectFrom("sessions").select("id").where("id", "=", newId).executeTakeFirst()) !== undefined
    ) {
      throw new InvalidArgumentError("newId", `a session with id ${newId} already exists`);
    }
    let title: string | null;
    if (explicitTitle !== undefined) {
      title = explicitTitle;
      const holder =
        title === null
          ? undefined
          : await db
              .selectFrom("sessions")
              .select("id")
              .where("title", "=", title)
              .limit(1)
              .executeTakeFirst();
      if (holder !== undefined && title !== null) throw new TitleConflictError(title, holder.id);
    } else {
      title = parent.title === null ? null : await nextTitleInLineage(db, parent.title);
    }
    await db
      .insertInto("sessions")
      .values({
        id: newId,
        source: parent.source,
        user_id: parent.user_id,
        model: parent.model,
        model_config: branchedConfig(parent.model_config, parentId),
        system_prompt: parent.system_prompt,
        parent_session_id: parentId,
        started_at: now,
        title,
        billing_provider: parent.billing_provider,
        billing_base_url: parent.billing_base_url,
        billing_mode: parent.billing_mode,
      })
      .execute();
    // The messages up to the fork point, copied with their search columns in one statement.
    const copied = [
      ...MESSAGE_COLUMNS.filter((c) => c !== "id" && c !== "session_id"),
      "search_vector",
      "search_tokens",
      "search_trigrams",
    ] as const;
    await db
      .insertInto("messages")
      .columns(["session_id", ...copied])
      .expression((eb) =>
        eb
          .selectFrom("messages")
          .select((e) => [e.val(newId).as("session_id"), ...copied])
          .where("session_id", "=", parentId)
          .where((e) => e(e.refTuple("timestamp", "id"), "<=", e.tuple(atT, atId)))
          .orderBy("timestamp")
          .orderBy("id"),
      )
      .execute();
    const copiedCalls = await db
      .selectFrom("messages")
      .select("tool_calls")
      .where("session_id", "=", newId)
      .execute();
    let toolCalls = 0;
    for (const m of copiedCalls) toolCalls += toolCallWeight(m.tool_calls);
    await db
      .updateTable("sessions")
      .set({ message_count: copiedCalls.length, tool_call_count: toolCalls })
      .where("id", "=", newId)
      .execute();
    return (await sessionById(db, newId)) as SessionRow;
  });
}

/** `model_config` of a fork: the parent's object with `_branched_from`, else a new object. */
function branchedConfig(config: string | null, parentId: string): string {
  if (config !== null) {
    try {
      const parsed: unknown = JSON.parse(config);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
        return JSON.stringify({ ...(parsed as Record<string, unknown>), _branched_from: parentId });
      }
    } catch {
      // not JSON: replaced, as SQLite's json_valid check does
    }
  }
  return JSON.stringify({ _branched_from: parentId });
}

/** A stored `tool_calls` value's weight in `tool_call_count` (array length, else 1, none 0). */
function toolCallWeight(text: string | null): number {
  if (text === null) return 0;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.length : 1;
  } catch {
    return 1;
  }
}
