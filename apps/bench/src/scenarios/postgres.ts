import { type ChildProcess, fork } from "node:child_process";
import type { SessionStore } from "@hermes/core";
import { openPostgresSessionStore, type PostgresSessionStore } from "@hermes/postgres";
import { type PgCluster, startPgCluster } from "@hermes/postgres/testing";
import { openSessionStore } from "@hermes/store";
import { mainDataset } from "../data/datasets.js";
import { ensureDataset } from "../data/ensure-dataset.js";
import { ensurePgDataset, PG_BENCH_SETTINGS } from "../data/pg-dataset.js";
import { type Figures, summarizeLatencies, timeRatio } from "../latency-summary.js";
import { caseFromSamples, measureAlternating } from "../measure-alternating.js";
import { latencyChart } from "../report/render-chart.js";
import type { CaseResult, Scenario } from "../scenario.js";
import type { PostgresWorkerReport, PostgresWorkerRequest } from "../workers/postgres-worker.js";
import { generateMessages, toAppendInput } from "./message-fixtures.js";
import { migrateToPostgresCase } from "./migrate-to-postgres-case.js";
import { SEARCH_QUERIES } from "./search.js";

const APPS = 8;
const SEARCHERS = 2;
/**
 * Each searcher starts a search every 50 ms at most (20/s, 40/s in all), the same offered load on
 * both stores; HERMES_BENCH_SEARCH_EVERY_MS=0 runs them back to back, which measures how the two
 * cores are shared more than the appends (the faster store's searchers then do more of the work).
 */
const SEARCH_EVERY_MS = Number(process.env.HERMES_BENCH_SEARCH_EVERY_MS ?? 50);
/**
 * The append phase runs twice per store, in the order A B B A, each round on fresh data, and
 * the figures pool both rounds: the machine's drift over the phase weighs on both stores alike,
 * and neither always runs first (a single p99 of a shared 2-core machine moves by several ms
 * from run to run).
 */
const ROUND_ORDER = ["sqlite", "postgres", "postgres", "sqlite"] as const;

interface AppsRun {
  appends: PostgresWorkerReport[];
  searches: PostgresWorkerReport[];
  rows: number;
  distinct: number;
  counterMismatches: number;
}

/** Where one side of the run keeps its data. */
interface Side {
  backend: "postgres" | "sqlite";
  target: string;
  schema?: string;
  open(): Promise<SessionStore>;
}

/** `APPS` append processes and `SEARCHERS` search processes on one store, released together. */
async function runApps(side: Side, count: number, seed: number): Promise<AppsRun> {
  const sessions = Array.from({ length: APPS }, (_, i) => `app-${i}`);
  const setup = await side.open();
  for (const id of sessions) await setup.createSession({ id, source: "bench", model: "bench" });
  // Something for the searchers to find from the start.
  await setup.createSession({ id: "corpus", source: "bench" });
  const corpus = generateMessages(seed + 1000, 2000).map((m) => toAppendInput("corpus", m));
  for (let i = 0; i < corpus.length; i += 500) await setup.appendMessages(corpus.slice(i, i + 500));
  await setup.close();

  const queries = SEARCH_QUERIES.map((q) => q.query);
  const children: ChildProcess[] = [];
  const start = (role: "append" | "search", worker: number) => {
    const child = fork(new URL("../workers/postgres-worker.js", import.meta.url), [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    children.push(child);
    const ready = new Promise<void>((resolve) => child.once("message", () => resolve()));
    const done = new Promise<PostgresWorkerReport>((resolve, reject) => {
      child.on("message", (m: { type: string }) => {
        if (m.type === "done") resolve(m as PostgresWorkerReport);
      });
      child.once("exit", (code) =>
        reject(new Error(`${role} worker ${worker} exited with ${code} before reporting`)),
      );
    });
    const request: PostgresWorkerRequest = {
      backend: side.backend,
      target: side.target,
      schema: side.schema,
      role,
      sessionId: sessions[worker % APPS]!,
      count,
      seed,
      worker,
      queries,
      searchEveryMs: SEARCH_EVERY_MS,
    };
    child.send(request);
    return { child, ready, done };
  };
  const apps = sessions.map((_, w) => start("append", w));
  const searchers = Array.from({ length: SEARCHERS }, (_, w) => start("search", APPS + w));
  await Promise.all([...apps, ...searchers].map((x) => x.ready));
  for (const x of [...apps, ...searchers]) x.child.send({ type: "go" });
  const appends = await Promise.all(apps.map((x) => x.done));
  for (const x of searchers) x.child.send({ type: "stop" });
  const searches = await Promise.all(searchers.map((x) => x.done));

  const check = await side.open();
  try {
    let rows = 0;
    let counterMismatches = 0;
    const contents = new Set<string>();
    for (const id of sessions) {
      const messages = await check.getMessages(id);
      rows += messages.length;
      for (const m of messages) contents.add(String(m.content));
      if ((await check.getSession(id))?.message_count !== messages.length) counterMismatches++;
    }
    return { appends, searches, rows, distinct: contents.size, counterMismatches };
  } finally {
    await check.close();
  }
}

/** From the first of `reports`' processes starting to the last one ending, ms. */
function wallMs(reports: readonly PostgresWorkerReport[]): number {
  return Math.max(...reports.map((r) => r.endedAt)) - Math.min(...reports.map((r) => r.startedAt));
}

/**
 * Latencies of several rounds pooled (p50 and p99 over every call of every round); throughput is
 * every call over the rounds' summed wall times.
 */
function pooledFigures(rounds: ReadonlyArray<readonly PostgresWorkerReport[]>): Figures {
  return summarizeLatencies(
    rounds.flatMap((reports) => reports.flatMap((r) => r.latenciesMs)),
    rounds.reduce((a, reports) => a + wallMs(reports), 0),
  );
}

/** One round's appends as "1234/s p99 15.6 ms" (no thousands separator: the report joins extras with commas). */
function roundText(reports: readonly PostgresWorkerReport[]): string {
  const f = pooledFigures([reports]);
  return `${Math.round(f.opsPerSec)}/s p99 ${f.p99Ms.toFixed(1)} ms`;
}

/** CPU the `reports`' processes spent while appending, per append of `appends`, ms. */
function cpuPerAppend(
  reports: readonly PostgresWorkerReport[],
  appends: readonly PostgresWorkerReport[],
): number {
  const n = appends.reduce((a, r) => a + r.latenciesMs.length, 0);
  return Number((reports.reduce((a, r) => a + r.cpuMs, 0) / n).toFixed(3));
}

/**
 * PostgreSQL next to SQLite: 8 app processes × 2,000 appends with 2 processes searching
 * meanwhile, then the search query mix on the main data set loaded into PostgreSQL.
 */
export const postgresScenario: Scenario = {
  name: "postgres",
  title: "@hermes/postgres: 8 app processes × 2,000 appends with concurrent searches, and the search mix",
  description:
    "The PostgreSQL store (one local server, fsync on) next to the SQLite store in the same run: 8 processes appending 2,000 messages each while 2 processes run the search mix, then the nine search queries on the main data set (1,000,000 messages at full scale) loaded into a cached PostgreSQL cluster.",
  async run(ctx) {
    const external = process.env.HERMES_PG_URL;
    let cluster: PgCluster | undefined = external
      ? undefined
      : await startPgCluster({ durable: true, settings: PG_BENCH_SETTINGS });
    const url = external ?? cluster!.connectionString;
    const cases: CaseResult[] = [];
    const notes: string[] = [];
    try {
      // Part 1: app processes appending under concurrent searches.
      // 2,000 appends per app whatever the scale: the scale sizes the search data set only.
      const count = ctx.quick ? 50 : 2000;
      const sides: Record<Side["backend"], (round: number) => Side> = {
        postgres: (round) => {
          const schema = `bench_apps_${process.pid}_${round}`;
          return {
            backend: "postgres",
            target: url,
            schema,
            open: () => openPostgresSessionStore({ connectionString: url, schema }),
          };
        },
        sqlite: (round) => {
          const path = `${ctx.workDir}/apps-${round}.db`;
          return { backend: "sqlite", target: path, open: () => openSessionStore({ path }) };
        },
      };
      ctx.log(`apps: ${APPS} × ${count} appends + ${SEARCHERS} searchers, rounds ${ROUND_ORDER.join(", ")}`);
      const runs: Record<Side["backend"], AppsRun[]> = { postgres: [], sqlite: [] };
      for (const [i, backend] of ROUND_ORDER.entries()) {
        ctx.log(`apps: round ${i + 1} of ${ROUND_ORDER.length}, ${backend}`);
        runs[backend].push(await runApps(sides[backend](i), count, ctx.seed));
      }
      const pgRuns = runs.postgres;
      const sqliteRuns = runs.sqlite;
      const sum = (xs: readonly AppsRun[], f: (r: AppsRun) => number) => xs.reduce((a, r) => a + f(r), 0);
      const distinct = (xs: readonly AppsRun[]) => sum(xs, (r) => r.distinct);
      const all = (xs: readonly AppsRun[], role: "appends" | "searches") => xs.flatMap((r) => r[role]);
      for (const [name, pick] of [
        ["appends (8 processes)", (r: AppsRun) => r.appends],
        ["concurrent searches (2 processes)", (r: AppsRun) => r.searches],
      ] as const) {
        const store = pooledFigures(pgRuns.map(pick));
        const baseline = pooledFigures(sqliteRuns.map(pick));
        const expected = APPS * count * pgRuns.length;
        cases.push({
          name,
          status: "ok",
          store,
          baseline,
          ratio: timeRatio(store, baseline),
          extra: name.startsWith("appends")
            ? {
                expected,
                rows: sum(pgRuns, (r) => r.rows),
                lost: expected - distinct(pgRuns),
                duplicated: sum(pgRuns, (r) => r.rows - r.distinct),
                counterMismatches: sum(pgRuns, (r) => r.counterMismatches),
                errors: sum(pgRuns, (r) => r.appends.reduce((a, w) => a + w.errors, 0)),
                retries: sum(pgRuns, (r) => r.appends.reduce((a, w) => a + w.retries, 0)),
                sqliteLost: APPS * count * sqliteRuns.length - distinct(sqliteRuns),
                sqliteErrors: sum(sqliteRuns, (r) => r.appends.reduce((a, w) => a + w.errors, 0)),
                // Each round on its own (appends/s, p99), in the order the rounds ran.
                rounds: pgRuns.map((r) => roundText(r.appends)).join("; "),
                sqliteRounds: sqliteRuns.map((r) => roundText(r.appends)).join("; "),
                // CPU of the app processes per append (appenders, then searchers), each side;
                // PostgreSQL's server CPU comes on top of its figures.
                appCpuMsPerAppend: cpuPerAppend(all(pgRuns, "appends"), all(pgRuns, "appends")),
                searcherCpuMsPerAppend: cpuPerAppend(all(pgRuns, "searches"), all(pgRuns, "appends")),
                sqliteAppCpuMsPerAppend: cpuPerAppend(all(sqliteRuns, "appends"), all(sqliteRuns, "appends")),
                sqliteSearcherCpuMsPerAppend: cpuPerAppend(
                  all(sqliteRuns, "searches"),
                  all(sqliteRuns, "appends"),
                ),
              }
            : { errors: sum(pgRuns, (r) => r.searches.reduce((a, w) => a + w.errors, 0)) },
        });
      }

      // Part 2: the search query mix on the main data set, on a PostgreSQL cluster that
      // holds it (loaded once with multi-row INSERTs and indexes built afterwards, then cached
      // next to the SQLite file; HERMES_PG_URL: imported into that server through the store).
      cluster?.stop();
      cluster = undefined;
      const data = await ensureDataset(mainDataset(ctx), ctx.dataDir);
      const sqlite = await openSessionStore({ path: data.path });
      let pg: PostgresSessionStore;
      if (external) {
        pg = await openPostgresSessionStore({
          connectionString: url,
          schema: `bench_main_${data.messages}_${ctx.seed}`,
        });
        if ((await pg.messageCount()) !== data.messages) {
          ctx.log(`importing ${data.messages.toLocaleString("en-US")} messages (importSessions)`);
          const t0 = performance.now();
          await pg.importSessions(sqlite.exportStream());
          await pg.vacuum();
          notes.push(
            `Loading the data set into PostgreSQL (importSessions from exportStream, then VACUUM ANALYZE) took ${((performance.now() - t0) / 1000).toFixed(0)} s.`,
          );
        }
      } else {
        const loaded = await ensurePgDataset(data, ctx.dataDir, ctx.log);
        cluster = loaded.cluster;
        pg = await openPostgresSessionStore({ connectionString: loaded.connectionString });
        const phases = Object.entries(loaded.phases)
          .map(([phase, ms]) => `${phase} ${(ms / 1000).toFixed(0)} s`)
          .join(", ");
        notes.push(
          `Loading the data set into PostgreSQL (multi-row INSERTs of 5,000 rows with the search columns computed by the adapter's searchColumns, message indexes (RUM where installed) built after the rows, then VACUUM ANALYZE) took ${(loaded.loadedInMs / 1000).toFixed(0)} s (${phases}; ${Math.round(data.messages / (((loaded.phases.sessions ?? 0) + (loaded.phases.messages ?? 0)) / 1000)).toLocaleString("en-US")} rows/s before indexing)${loaded.loadedNow ? "" : "; this run reused the cached cluster"}.`,
        );
      }
      try {
        const plan = ctx.quick
          ? { warmup: 1, iterations: 4, rounds: 2 }
          : // Up to 200 samples a side in blocks of 10, sides taking turns: a millisecond query's
            // p50 from 200 samples, a slow one's from as many as 8 s of measuring allows.
            { warmup: 5, iterations: 200, rounds: 20, budgetMs: 8_000 };
        for (const q of SEARCH_QUERIES) {
          let pgHits = 0;
          let sqliteHits = 0;
          const samples = await measureAlternating(
            async () => {
              pgHits = (await pg.searchMessages(q.query, { limit: 20 })).length;
            },
            async () => {
              sqliteHits = (await sqlite.searchMessages(q.query, { limit: 20 })).length;
            },
            plan,
          );
          cases.push(
            caseFromSamples(`search: ${q.name}`, "searchMessages", samples, {
              query: q.query,
              pgHits,
              sqliteHits,
            }),
          );
          ctx.log(`search ${q.name}: done`);
        }
        notes.push(
          `Data set: ${data.messages.toLocaleString("en-US")} messages in ${data.sessions.toLocaleString("en-US")} sessions.`,
        );
      } finally {
        await sqlite.close();
        await pg.close();
      }
      // Part 3: the CLI copies the same file into a fresh schema of the same server.
      if (!external && cluster !== undefined && process.env.HERMES_BENCH_SKIP_MIGRATE !== "1")
        cases.push(await migrateToPostgresCase(cluster.connectionString, data.path, ctx.log));
      notes.push(
        "Here 'ours' is the PostgreSQL store and 'baseline' the SQLite store (@hermes/store), both through the same API, in the same run; ratio = PostgreSQL time / SQLite time.",
        `Appends: ${APPS} processes × ${count}, one appendMessage per call, while ${SEARCHERS} processes loop over the search mix, each starting a search every ${SEARCH_EVERY_MS} ms at most (${SEARCH_EVERY_MS > 0 ? `${Math.round((SEARCHERS * 1000) / SEARCH_EVERY_MS)} searches/s offered to each store` : "back to back"}; the concurrent-searches row gives the rate each store achieved); ops/s are aggregate from the first start to the last end of a round. Each store runs the phase twice, on fresh data each time, in the order ${ROUND_ORDER.join(", ")}; the rows pool both rounds (p50 and p99 over all ${(2 * APPS * count).toLocaleString("en-US")} appends of a store, ops/s over the summed rounds), and the appends row's rounds and sqliteRounds give each round alone.`,
        external
          ? "Server: HERMES_PG_URL."
          : `Servers: appends on a throwaway local cluster, the search mix on a cluster kept under the data directory; both initdb defaults (fsync and synchronous_commit on) but max_connections=200 and ${Object.entries(
              PG_BENCH_SETTINGS,
            )
              .map(([k, v]) => `${k}=${v}`)
              .join(", ")}.`,
      );
      return {
        cases,
        notes,
        chart: latencyChart("PostgreSQL store vs SQLite store (latency per operation)", cases, { log: true }),
        parameters: {
          apps: APPS,
          searchers: SEARCHERS,
          searchEveryMs: SEARCH_EVERY_MS,
          appendsPerApp: count,
          appendRounds: ROUND_ORDER.join(", "),
          dataset: mainDataset(ctx),
        },
      };
    } finally {
      cluster?.stop();
    }
  },
};
