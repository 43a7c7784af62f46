import { openSessionStore, type SessionStore } from "@hermes/store";
import { mainDataset, resumeDataset } from "../data/datasets.js";
import { BIG_SESSION_ID, ensureDataset } from "../data/ensure-dataset.js";
import { quantile } from "../latency-summary.js";
import { caseFromSamples, measureAlternating } from "../measure-alternating.js";
import { latencyChart } from "../report/render-chart.js";
import type { CaseResult, Scenario } from "../scenario.js";
import { SEARCH_QUERIES } from "./search.js";
import { searchBurstCase } from "./web-search-burst.js";
import { call, ServerProcess } from "./web-server-process.js";

/** Bytes on the wire of the first page load: the page, its stylesheet, its script and the chunks that script imports. */
async function firstLoad(server: ServerProcess, encoding: "br" | "gzip") {
  const page = await call(server, "/", "identity");
  const assets = [
    ...page.bytes.toString("utf8").matchAll(/(?:href|src)="(\/assets\/[^"]+\.(?:js|css))"/g),
  ].map((m) => m[1]!);
  const seen = new Set<string>();
  let js = 0;
  let css = 0;
  const queue = [...assets];
  while (queue.length > 0) {
    const path = queue.shift()!;
    if (seen.has(path)) continue;
    seen.add(path);
    const compressed = await call(server, path, encoding);
    if (compressed.encoding !== encoding) throw new Error(`${path} was not sent with ${encoding}`);
    if (path.endsWith(".css")) css += compressed.bytes.length;
    else js += compressed.bytes.length;
    if (path.endsWith(".js")) {
      // Static imports of the entry (shared chunks); import() chunks load later, with their page.
      const plain = (await call(server, path, "identity")).bytes.toString("utf8");
      for (const m of plain.matchAll(/(?:^|[;}])\s*import\s*(?:[^"'()]*?from\s*)?"\.\/([^"]+\.js)"/g))
        queue.push(`/assets/${m[1]}`);
    }
  }
  return { html: page.bytes.length, js, css, files: seen.size + 1 };
}

interface Plan {
  warmup: number;
  iterations: number;
  rounds: number;
  budgetMs: number;
}

/** One API call through HTTP next to the same store call made directly (the baseline: what HTTP and JSON add). */
async function apiCase(
  name: string,
  server: ServerProcess,
  path: string,
  direct: () => Promise<unknown>,
  plan: Plan,
): Promise<CaseResult> {
  // Event-loop delay of the server's process while the case runs: a read that runs on the
  // server's thread holds its loop for the read's whole duration.
  server.resetLoop();
  const samples = await measureAlternating(() => call(server, path), direct, plan);
  const loop = await server.readLoop();
  const sorted = [...samples.store].sort((a, b) => a - b);
  return caseFromSamples(name, "web API", samples, {
    p95Ms: Number(quantile(sorted, 0.95).toFixed(2)),
    responseBytesGzip: (await call(server, path)).bytes.length,
    loopDelayP99Ms: loop.p99Ms,
    loopDelayMaxMs: loop.maxMs,
  });
}

/** The session browser's server on the 1,000,000-message file and on a 20,000-message session. */
export const webScenario: Scenario = {
  name: "web",
  title: "Session browser: API calls, first page load, event loop during searches",
  description:
    "HTTP calls of `hermes-sessions serve` (first sessions page, next page, each search query type, a 20,000-message conversation a page at a time) over loopback, next to the same store calls made directly; bytes of the first page load; event-loop delay of the server's process while searches run, one at a time and as a burst of concurrent searches on a freshly started server (read workers warmed at start, next to started on demand).",
  async run(ctx) {
    const plan: Plan = ctx.quick
      ? { warmup: 1, iterations: 6, rounds: 2, budgetMs: 10_000 }
      : { warmup: 2, iterations: 20, rounds: 4, budgetMs: 30_000 };
    const main = await ensureDataset(mainDataset(ctx), ctx.dataDir);
    const big = await ensureDataset(resumeDataset(ctx), ctx.dataDir);
    const cases: CaseResult[] = [];
    const notes: string[] = [];
    const firstLoads: Record<string, Awaited<ReturnType<typeof firstLoad>>> = {};
    let loopMaxMs = Number.NaN;
    let burstExtra: CaseResult["extra"];
    let store: SessionStore | undefined;
    let server: ServerProcess | undefined;
    try {
      store = await openSessionStore({ path: main.path });
      // The store's search index caught up (a short CJK search builds it): a file the store has
      // searched in carries it, and the unfiltered sessions page reads its timestamp blocks.
      await store.searchMessages("桂", { limit: 1 });
      server = await ServerProcess.start(main.path);
      const s = store;
      const first = await s.listSessionPage({ limit: 50 });
      const cursor = first.nextCursor ?? "";
      cases.push(
        await apiCase(
          "sessions: first page (50)",
          server,
          "/api/sessions?limit=50",
          () => s.listSessionPage({ limit: 50 }),
          plan,
        ),
        await apiCase(
          "sessions: next page",
          server,
          `/api/sessions?limit=50&cursor=${cursor}`,
          () => s.listSessionPage({ limit: 50, cursor }),
          plan,
        ),
        await apiCase(
          "sessions: filtered (source + model)",
          server,
          "/api/sessions?limit=50&source=discord&model=openai%2Fgpt-5",
          () => s.listSessionPage({ limit: 50, sources: ["discord"], models: ["openai/gpt-5"] }),
          plan,
        ),
      );
      for (const q of SEARCH_QUERIES) {
        const c = await apiCase(
          `search: ${q.name}`,
          server,
          `/api/search?q=${encodeURIComponent(q.query)}&limit=20`,
          () => s.searchMessages(q.query, { limit: 20 }),
          plan,
        );
        cases.push(c);
        loopMaxMs = Math.max(Number.isNaN(loopMaxMs) ? 0 : loopMaxMs, Number(c.extra?.loopDelayMaxMs ?? 0));
      }
      // Fresh servers of their own, while this store keeps the file open (as the agent would):
      // the served read-only store then reads through its workers.
      const burstCase = await searchBurstCase(
        main.path,
        ctx.quick ? { clients: 2, rounds: 1 } : { clients: 4, rounds: 2 },
      );
      cases.push(burstCase);
      burstExtra = burstCase.extra;
      for (const encoding of ["br", "gzip"] as const)
        firstLoads[encoding] = await firstLoad(server, encoding);
      await server.stop();
      server = undefined;
      await store.close();
      store = undefined;

      server = await ServerProcess.start(big.path);
      store = await openSessionStore({ path: big.path });
      const b = store;
      const middle =
        (await b.getMessagePage(BIG_SESSION_ID, { limit: 1, from: "start" })).messages[0]?.id ?? 0;
      const mid =
        (await b.getMessagePage(BIG_SESSION_ID, { afterId: middle, limit: 1000 })).messages.at(-1)?.id ??
        middle;
      const id = encodeURIComponent(BIG_SESSION_ID);
      cases.push(
        await apiCase(
          "conversation: session + lineage",
          server,
          `/api/sessions/${id}`,
          () =>
            Promise.all([
              b.getSession(BIG_SESSION_ID),
              b.getLineage(BIG_SESSION_ID, { maxDescendants: 200 }),
            ]),
          plan,
        ),
        await apiCase(
          "conversation: first 100 of 20,000",
          server,
          `/api/sessions/${id}/messages?limit=100`,
          () => b.getMessagePage(BIG_SESSION_ID, { limit: 100 }),
          plan,
        ),
        await apiCase(
          "conversation: last 100 of 20,000",
          server,
          `/api/sessions/${id}/messages?from=end&limit=100`,
          () => b.getMessagePage(BIG_SESSION_ID, { limit: 100, from: "end" }),
          plan,
        ),
        await apiCase(
          "conversation: 100 around a message",
          server,
          `/api/sessions/${id}/messages?around=${mid}&limit=100`,
          () => b.getMessagePage(BIG_SESSION_ID, { limit: 100, aroundId: mid }),
          plan,
        ),
      );
      notes.push(
        `Data sets: ${main.sessions.toLocaleString("en-US")} sessions / ${main.messages.toLocaleString("en-US")} messages (${(main.fileBytes / 2 ** 20).toFixed(0)} MiB); a ${big.spec.bigSessionMessages.toLocaleString("en-US")}-message session for the conversation cases.`,
        "Ours: the HTTP call over loopback to the server in its own process (a new connection per call, gzip-encoded JSON, the body read whole); baseline: the same store call made directly in the bench's process. The ratio is what HTTP, JSON and compression add.",
        "The page shows at most 300 messages of a conversation at once; it reads them 100 at a time.",
        "The file carries the store's search index, caught up before the cases: the unfiltered sessions pages are proven from its timestamp blocks, the filtered one orders the sessions its filters keep.",
        `Event loop of the server's process while the searches ran one at a time: longest delay ${loopMaxMs.toFixed(0)} ms (per-case p99 and max in loopDelay*; the server's read-only store reads in the read pool's workers, which it starts before it listens).`,
        `Search burst: a server started for it, its first requests the search mix from several clients at once; ours is \`serve\` as it is (the store opened with warmReaders: every read worker ready before it listens), the baseline the same server on a store whose workers start on demand (reads on the server's thread until one is ready, as before). Event-loop delay of the server's process per server run (p50 / p99 / max): warm ${burstCase.extra?.["warm.loopP50Ms"]} / ${burstCase.extra?.["warm.loopP99Ms"]} / ${burstCase.extra?.["warm.loopMaxMs"]} ms, on demand ${burstCase.extra?.["onDemand.loopP50Ms"]} / ${burstCase.extra?.["onDemand.loopP99Ms"]} / ${burstCase.extra?.["onDemand.loopMaxMs"]} ms; start to listening ${burstCase.extra?.["warm.startMs"]} ms warm, ${burstCase.extra?.["onDemand.startMs"]} ms on demand.`,
        ...Object.entries(firstLoads).map(
          ([enc, l]) =>
            `First page load (${enc}): ${((l.js + l.css + l.html) / 1024).toFixed(1)} KB (JS ${(l.js / 1024).toFixed(1)} KB, CSS ${(l.css / 1024).toFixed(1)} KB, HTML ${(l.html / 1024).toFixed(1)} KB, ${l.files} files); the chart library loads with the Usage page only.`,
        ),
      );
    } finally {
      await server?.stop();
      await store?.close();
    }
    return {
      cases,
      notes,
      chart: latencyChart(
        "Session browser API calls",
        cases.filter((c) => c.store !== null),
        { log: true },
      ),
      parameters: {
        ...plan,
        main: main.spec,
        conversation: big.spec,
        firstLoads,
        searchLoopDelayMaxMs: loopMaxMs,
        searchBurst: burstExtra,
      },
    };
  },
};
