import type { SessionStore } from "@hermes/store";

/** Every hit's id of `q`, all pages, ascending. */
export async function searchHitIds(store: SessionStore, q: string): Promise<number[]> {
  const out: number[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await store.searchMessages(q, { limit: 1000, offset });
    out.push(...page.map((h) => h.id));
    if (page.length < 1000) return out.sort((a, b) => a - b);
  }
}
