import { createHistogram, monitorEventLoopDelay } from "node:perf_hooks";
import { openSessionStore, type SessionStore } from "@hermes/store";
import { type RunningSessionBrowser, serveSessionBrowser } from "@hermes/web";
import { mainDataset, resumeDataset } from "../data/datasets.js";
import { BIG_SESSION_ID, ensureDataset } from "../data/ensure-dataset.js";
import { quantile } from "../latency-summary.js";
import { caseFromSamples, measureAlternating } from "../measure-alternating.js";
import { latencyChart } from "../report/render-chart.js";
import type { CaseResult, Scenario } from "../scenario.js";
import { SEARCH_QUERIES } from "./search.js";

/** GETs an API path of a running browser server and reads the whole body. */
async function call(server: RunningSessionBrowser, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.origin}${path}`, {
    headers: { authorization: `Bearer ${server.token}`, "accept-encoding": "gzip", ...headers },
  });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
  return res.arrayBuffer();
}

/** Bytes on the wire of the first page load: the page, its stylesheet, its script and the chunks that script imports. */
async function firstLoad(server: RunningSessionBrowser, encoding: "br" | "gzip") {
  const get = async (path: string) => {
    const res = await fetch(`${server.origin}${path}`, {
      headers: { authorization: `Bearer ${server.token}`, "accept-encoding": encoding },
    });
    const body = await res.arrayBuffer();
    return {
      text: res.headers.get("content-encoding") ? "" : new TextDecoder().decode(body),
      bytes: body.byteLength,
      res,
    };
  };
  const page = await get("/");
  const assets = [...page.text.matchAll(/(?:href|src)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  const seen = new Set<string>();
  let js = 0;
  let css = 0;
  const queue = [...assets];
  while (queue.length > 0) {
    const path = queue.shift()!;
    if (seen.has(path)) continue;
    seen.add(path);
    const compressed = await get(path);
    if (path.endsWith(".css")) css += compressed.bytes;
    else js += compressed.bytes;
    if (path.endsWith(".js")) {
      // Static imports of the entry (shared chunks); dynamic import() chunks load later.
      const plain = await (
        await fetch(`${server.origin}${path}`, { headers: { authorization: `Bearer ${server.token}` } })
      ).text();
      for (const m of plain.matchAll(/(?:^|[;}])\s*import\s*(?:[^"'()]*?from\s*)?"\.\/([^"]+\.js)"/g))
        queue.push(`/assets/${m[1]}`);
    }
  }
  return { html: page.bytes, js, css, files: seen.size };
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
  server: RunningSessionBrowser,
  path: string,
  direct: () => Promise<unknown>,
  plan: Plan,
): Promise<CaseResult> {
  // Event-loop delay of this process (the server's) while the case runs: a read that runs on
  // the caller's thread holds the loop for its whole duration.
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const samples = await measureAlternating(() => call(server, path), direct, plan);
  loop.disable();
  const sorted = [...samples.store].sort((a, b) => a - b);
  const ms = (ns: number) => Number((ns / 1e6).toFixed(1));
  return caseFromSamples(name, "web API", samples, {
    p95Ms: Number(quantile(sorted, 0.95).toFixed(2)),
    responseBytesGzip: (await call(server, path)).byteLength,
    loopDelayP99Ms: ms(loop.percentile(99)),
    loopDelayMaxMs: ms(loop.max),
  });
}

/** The session browser's server on the 1,000,000-message file and on a 20,000-message session. */
export const webScenario: Scenario = {
  name: "web",
  title: "Session browser: API calls, first page load, event loop during searches",
  description:
    "HTTP calls of `hermes-sessions serve` (first sessions page, next page, each search query type, a 20,000-message conversation a page at a time) over loopback, next to the same store calls made directly; bytes of the first page load; event-loop delay of the server's process while searches run.",
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
    let store: SessionStore | undefined;
    let server: RunningSessionBrowser | undefined;
    try {
      server = await serveSessionBrowser({ db: main.path, port: 0 });
      store = await openSessionStore({ path: main.path });
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
      const loop = createHistogram();
      for (const q of SEARCH_QUERIES) {
        const c = await apiCase(
          `search: ${q.name}`,
          server,
          `/api/search?q=${encodeURIComponent(q.query)}&limit=20`,
          () => s.searchMessages(q.query, { limit: 20 }),
          plan,
        );
        cases.push(c);
        loop.record(Math.max(1, Math.round(Number(c.extra?.loopDelayMaxMs ?? 0) * 1000)));
      }
      loopMaxMs = loop.max / 1000;
      for (const encoding of ["br", "gzip"] as const)
        firstLoads[encoding] = await firstLoad(server, encoding);
      await server.close();
      server = undefined;
      await store.close();
      store = undefined;

      server = await serveSessionBrowser({ db: big.path, port: 0 });
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
        "Ours: the HTTP call over loopback (fetch in the server's own process, gzip-encoded JSON); baseline: the same store call made directly. The ratio is what HTTP, JSON and compression add.",
        "The page shows at most 300 messages of a conversation at once; it reads them 100 at a time.",
        `Event loop of the server's process while the searches ran: longest delay ${loopMaxMs.toFixed(0)} ms (per-case p99 and max in loopDelay*; reads run on the caller's thread until the read pool lands).`,
        ...Object.entries(firstLoads).map(
          ([enc, l]) =>
            `First page load (${enc}): ${((l.js + l.css + l.html) / 1024).toFixed(1)} KB (JS ${(l.js / 1024).toFixed(1)} KB, CSS ${(l.css / 1024).toFixed(1)} KB, HTML ${(l.html / 1024).toFixed(1)} KB, ${l.files} files); the chart library loads with the Usage page only.`,
        ),
      );
    } finally {
      await server?.close();
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
      },
    };
  },
};
