import type { StoreContext } from "../store-context.js";
import type { SearchHit, SearchMessagesOptions } from "../types.js";

export async function searchMessages(
  _ctx: StoreContext,
  _query: string,
  _o?: SearchMessagesOptions,
): Promise<SearchHit[]> {
  throw new Error("searchMessages is not implemented yet");
}
