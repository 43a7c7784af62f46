import type { SessionRow } from "@hermes/schema";
import type { StoreContext } from "../store-context.js";

const todo = (name: string): never => {
  throw new Error(`${name} is not implemented yet`);
};

export async function setSessionTitle(
  _ctx: StoreContext,
  _id: string,
  _title: string | null,
): Promise<boolean> {
  return todo("setSessionTitle");
}
export function getSessionTitle(_ctx: StoreContext, _id: string): string | null {
  return todo("getSessionTitle");
}
export function getSessionByTitle(_ctx: StoreContext, _title: string): SessionRow | null {
  return todo("getSessionByTitle");
}
export function resolveSessionByTitle(_ctx: StoreContext, _title: string): string | null {
  return todo("resolveSessionByTitle");
}
export function getNextTitleInLineage(_ctx: StoreContext, _baseTitle: string): string {
  return todo("getNextTitleInLineage");
}
