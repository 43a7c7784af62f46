import type { StoreContext } from "../store-context.js";
import type { ListSessionsRichOptions, RichSessionRow, SessionWithLastActive } from "../types.js";

const todo = (name: string): never => {
  throw new Error(`${name} is not implemented yet`);
};

export function searchSessions(
  _ctx: StoreContext,
  _o?: { source?: string; limit?: number; offset?: number },
): SessionWithLastActive[] {
  return todo("searchSessions");
}
export function listSessionsRich(_ctx: StoreContext, _o?: ListSessionsRichOptions): RichSessionRow[] {
  return todo("listSessionsRich");
}
export function getCompressionTip(_ctx: StoreContext, _id: string): string {
  return todo("getCompressionTip");
}
export function resolveResumeSessionId(_ctx: StoreContext, _id: string): string {
  return todo("resolveResumeSessionId");
}
