import { setTimeout as sleep } from "node:timers/promises";
import type { SqliteStoreStats } from "@hermes/core";

/**
 * Waits until the store runs no build of its short-CJK index (its worker thread has ended),
 * then returns the index's state. Fails after `timeoutMs`.
 */
export async function cjkBuildSettled(
  store: { stats(): unknown },
  timeoutMs = 30_000,
): Promise<SqliteStoreStats["sideIndexes"]["cjk"]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { cjk } = (store.stats() as SqliteStoreStats).sideIndexes;
    if (!cjk.active) return cjk;
    if (Date.now() > until) throw new Error(`the short-CJK index build did not end in ${timeoutMs} ms`);
    await sleep(10);
  }
}
