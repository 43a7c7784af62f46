import type { SearchMessagesOptions, SessionStore } from "@hermes/core";
import { planSearch } from "@hermes/search";

/**
 * A search as two stores (or two index methods) can agree on it: a query the SQLite store
 * ranks by relevance (bm25; PostgreSQL ranks with its own measure) gives every hit (snippets
 * and contexts included) in id order and the page's size, each page hit one of them; a
 * newest-first query gives the page itself, in order.
 */
export async function comparableSearch(
  store: SessionStore,
  query: string,
  o: SearchMessagesOptions = {},
): Promise<unknown> {
  const page = await store.searchMessages(query, o);
  if (planSearch(query).kind !== "ranked") return page;
  const all = await store.searchMessages(query, { ...o, limit: 1000, offset: 0 });
  const keys = new Set(all.map((h) => JSON.stringify(h)));
  return {
    hits: [...all].sort((a, b) => a.id - b.id),
    pageSize: page.length,
    pageFromHits: page.every((h) => keys.has(JSON.stringify(h))),
  };
}
