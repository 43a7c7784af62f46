import { sql } from "kysely";
import { InvalidArgumentError } from "../errors.js";
import { compileQuery, param } from "../prepared-query.js";
import type { StoreContext } from "../store-context.js";
import type {
  AutoPruneOptions,
  AutoPruneResult,
  MessageRow,
  SessionExport,
  SessionWithLastActive,
} from "../types.js";
import { requireId } from "../validate.js";

const todo = (name: string): never => {
  throw new Error(`${name} is not implemented yet`);
};

export function exportSession(_ctx: StoreContext, _id: string): SessionExport | null {
  return todo("exportSession");
}
export function exportAll(
  _ctx: StoreContext,
  _o?: { source?: string },
): Array<SessionWithLastActive & { messages: MessageRow[] }> {
  return todo("exportAll");
}
export async function deleteSession(
  _ctx: StoreContext,
  _id: string,
  _o?: { sessionsDir?: string },
): Promise<boolean> {
  return todo("deleteSession");
}
export async function pruneSessions(
  _ctx: StoreContext,
  _o?: { olderThanDays?: number; source?: string; sessionsDir?: string },
): Promise<number> {
  return todo("pruneSessions");
}

const getMetaQ = compileQuery<{ key: string }>((db) =>
  db.selectFrom("state_meta").select("value").where("key", "=", param("key")),
);
const setMetaQ = compileQuery<{ key: string; value: string }>((db) =>
  db
    .insertInto("state_meta")
    .values({ key: param("key"), value: param("value") })
    .onConflict((oc) => oc.column("key").doUpdateSet({ value: sql`excluded.value` })),
);

export function getMeta(ctx: StoreContext, key: string): string | null {
  const row = ctx.conn.getOf<{ value: string | null }, { key: string }>(getMetaQ, {
    key: requireId("key", key),
  });
  return row?.value ?? null;
}

export async function setMeta(ctx: StoreContext, key: string, value: string): Promise<void> {
  const args = { key: requireId("key", key), value };
  if (typeof value !== "string") {
    throw new InvalidArgumentError("value", "value must be a string");
  }
  await ctx.writes.run("setMeta", () => {
    ctx.conn.runOf(setMetaQ, args);
  });
}

export async function vacuum(_ctx: StoreContext): Promise<void> {
  return todo("vacuum");
}
export async function maybeAutoPruneAndVacuum(
  _ctx: StoreContext,
  _o?: AutoPruneOptions,
): Promise<AutoPruneResult> {
  return todo("maybeAutoPruneAndVacuum");
}
