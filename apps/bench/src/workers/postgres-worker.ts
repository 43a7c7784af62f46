/**
 * An app process of the `postgres` scenario: opens the store (PostgreSQL, or the SQLite store
 * for the side-by-side run), waits for "go", then either appends its messages one call each or
 * runs the search query mix in a loop until told to stop, reporting every latency.
 */

import type { SessionStore } from "@hermes/core";
import { openPostgresSessionStore } from "@hermes/postgres";
import { openSessionStore } from "@hermes/store";
import { generateMessages, toAppendInput } from "../scenarios/message-fixtures.js";
import { errorText } from "./error-text.js";

/** The parent's instructions. */
export interface PostgresWorkerRequest {
  backend: "postgres" | "sqlite";
  /** Connection string (postgres) or file path (sqlite). */
  target: string;
  schema?: string;
  role: "append" | "search";
  sessionId: string;
  count: number;
  seed: number;
  worker: number;
  queries: readonly string[];
  /** A searcher starts a search every this many ms at most (0: back to back). */
  searchEveryMs: number;
}

/** The worker's report. */
export interface PostgresWorkerReport {
  type: "done";
  worker: number;
  role: "append" | "search";
  latenciesMs: number[];
  startedAt: number;
  endedAt: number;
  errors: number;
  firstError: string | null;
  retries: number;
  /** CPU time (user + system) this process spent from "go" to its last call, ms. */
  cpuMs: number;
}

const now = () => performance.timeOrigin + performance.now();

process.once("message", async (request: PostgresWorkerRequest) => {
  const store: SessionStore =
    request.backend === "postgres"
      ? await openPostgresSessionStore({
          connectionString: request.target,
          schema: request.schema,
          maxConnections: 4,
          // HERMES_BENCH_SEAL_EVERY: seal the word index more often than the default 20,000
          // appends (the append phase writes 18,000 rows), to measure appends with seals.
          ...(process.env.HERMES_BENCH_SEAL_EVERY
            ? { wordIndex: { sealEvery: Number(process.env.HERMES_BENCH_SEAL_EVERY) } }
            : {}),
        })
      : await openSessionStore({ path: request.target });
  const messages =
    request.role === "append" ? generateMessages(request.seed + request.worker, request.count) : [];
  let stop = false;
  process.on("message", (m: { type?: string }) => {
    if (m.type === "stop") stop = true;
  });
  process.send?.({ type: "ready" });
  await new Promise<void>((resolve) => process.once("message", () => resolve()));

  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  const record = async (fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    try {
      await fn();
    } catch (error) {
      errors++;
      firstError ??= errorText(error);
    }
    latencies.push(performance.now() - t0);
  };
  const startedAt = now();
  const cpu0 = process.cpuUsage();
  if (request.role === "append") {
    for (let i = 0; i < request.count; i++) {
      await record(() =>
        store.appendMessage(toAppendInput(request.sessionId, messages[i]!, ` [w${request.worker}-${i}]`)),
      );
    }
  } else {
    // One search per period at most: the same offered search load on both stores.
    const every = request.searchEveryMs;
    for (let i = 0; !stop; i++) {
      const due = performance.now() + every;
      await record(() => store.searchMessages(request.queries[i % request.queries.length]!, { limit: 20 }));
      const wait = due - performance.now();
      await new Promise((r) => (wait > 0 ? setTimeout(r, wait) : setImmediate(r)));
    }
  }
  const endedAt = now();
  const cpu = process.cpuUsage(cpu0);
  const retries = store.stats().retries;
  await store.close();
  const report: PostgresWorkerReport = {
    type: "done",
    worker: request.worker,
    role: request.role,
    latenciesMs: latencies,
    startedAt,
    endedAt,
    errors,
    firstError,
    retries,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
  process.send?.(report, () => process.exit(0));
});
