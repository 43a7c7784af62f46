import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { openSessionStore, type StoreChange } from "@hermes/store";
import { mainDataset } from "../data/datasets.js";
import { ensureDataset } from "../data/ensure-dataset.js";
import { caseFromSamples, measureAlternating } from "../measure-alternating.js";
import { openRawConnection } from "../raw-connection.js";
import { rawIdPoller } from "../raw-id-poller.js";
import { latencyChart } from "../report/render-chart.js";
import type { Scenario } from "../scenario.js";
import { missingMethod } from "../store-capability.js";

/** How often both sides look for new rows, in ms. */
const INTERVAL_MS = 10;

/** From an append by another connection to the reader seeing it, on a copy of the 1M-message file. */
export const changeFeedScenario: Scenario = {
  name: "change-feed",
  title: "Change feed: an append seen by another connection",
  description: `From appendMessage on one connection to watchChanges on another yielding it (checks every ${INTERVAL_MS} ms: PRAGMA data_version, then the rowid range since the cursor), next to a raw better-sqlite3 reader polling SELECT … FROM messages WHERE id > ? at the same interval, on a copy of the generated 1,000,000-message file.`,
  async run(ctx) {
    const data = await ensureDataset(mainDataset(ctx), ctx.dataDir);
    const path = join(ctx.workDir, "change-feed.db");
    copyFileSync(data.path, path); // the cached data set is never written
    const writer = await openSessionStore({ path });
    const reader = await openSessionStore({ path });
    const raw = openRawConnection(path);
    const poller = rawIdPoller(raw, INTERVAL_MS);
    const sessionId = "bench-change-feed";
    await writer.createSession({ id: sessionId, source: "bench" });
    const stop = new AbortController();
    const missing = missingMethod(reader, "watchChanges");
    const feed =
      missing === null
        ? reader
            .watchChanges({
              signal: stop.signal,
              intervalMs: INTERVAL_MS,
              includeMessages: true,
              afterMessageId: poller.cursor,
            })
            [Symbol.asyncIterator]()
        : null;
    const plan = ctx.quick
      ? { warmup: 3, iterations: 20, rounds: 4 }
      : { warmup: 10, iterations: 300, rounds: 6, budgetMs: 30_000 };
    const append = (i: number) =>
      writer.appendMessage({ sessionId, role: "user", content: `change feed ${i}` });
    try {
      const ours = async (i: number) => {
        if (feed === null) throw new Error(missing ?? "no watchChanges");
        const id = await append(i);
        for (;;) {
          const next = await feed.next();
          if (next.done) throw new Error("the feed ended");
          if ((next.value as StoreChange).lastMessageId >= id) return;
        }
      };
      const baseline = async (i: number) => poller.waitFor(await append(i));
      const samples = await measureAlternating(ours, baseline, plan);
      const cases = [
        caseFromSamples("append → seen by another connection", "watchChanges", samples, {
          intervalMs: INTERVAL_MS,
          messages: data.spec.messages,
        }),
      ];
      return {
        cases,
        notes: [
          "Both sides include the append itself (one write transaction, synchronous FULL) and wait up to one interval; the difference is what a check costs: the feed reads data_version and, only after a commit, the rows past its cursor.",
        ],
        chart: latencyChart("Append → seen by another connection", cases),
        parameters: { ...plan, intervalMs: INTERVAL_MS, messages: data.spec.messages },
      };
    } finally {
      stop.abort();
      await feed?.return?.();
      raw.close();
      await reader.close();
      await writer.close();
    }
  },
};
