/**
 * A writer process of the `contention` scenario: opens the file (through the store, or raw
 * better-sqlite3 for the baseline), waits for the parent's "go" so all writers start together,
 * appends its messages one per transaction and reports every latency, its event-loop delay and
 * the store's retry counters. With `loops` > 1 it runs that many writers at once in this one
 * process, on one store, each with its own session and messages (the in-process reference case).
 * Mode `reference` writes raw, the way the Python original's write path does (SPEC §4): SQLite's
 * busy handler waits up to 1 s, and a busy attempt sleeps 20–150 ms before the next, 15 at most.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { openSessionStore, type SessionStore } from "@hermes/store";
import { openRawConnection } from "../raw-connection.js";
import { generateMessages, RawAppender, toAppendInput } from "../scenarios/message-fixtures.js";
import { errorText } from "./error-text.js";

/** The Python original's write path: its busy timeout, attempts and sleep between them (SPEC §4). */
const REFERENCE_BUSY_TIMEOUT_MS = 1000;
const REFERENCE_ATTEMPTS = 15;
const REFERENCE_SLEEP_MS = [20, 150] as const;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isLockError(error: unknown): boolean {
  const text = error instanceof Error ? error.message.toLowerCase() : "";
  return text.includes("locked") || text.includes("busy");
}

/**
 * Runs `write` as the Python original's write path does: on a lock error (its own test: the
 * message says locked or busy), sleeps 20–150 ms and tries again, 15 attempts in all; counts the
 * retries and the time slept in `counters`.
 */
async function withReferenceRetries<T>(write: () => T, counters: { retries: number; waitedMs: number }) {
  for (let attempt = 1; ; attempt++) {
    try {
      return write();
    } catch (error) {
      if (!isLockError(error) || attempt >= REFERENCE_ATTEMPTS) throw error;
      const [min, max] = REFERENCE_SLEEP_MS;
      const ms = min + Math.random() * (max - min);
      counters.retries++;
      counters.waitedMs += ms;
      await sleep(ms);
    }
  }
}

/** The parent's instructions. */
export interface AppendWorkerRequest {
  /** `raw`: hand-written better-sqlite3; `reference`: the same, with the Python original's retries. */
  mode: "store" | "raw" | "reference";
  path: string;
  /** One session per writer of this process, in order. */
  sessionIds: string[];
  count: number;
  seed: number;
  worker: number;
  /**
   * Concurrent writers in this process (default 1), each awaiting its own appends. Writer `l` of
   * worker `w` is writer number `w × loops + l` of the run: its session, messages and markers are
   * those of the process with that number in a run of one writer per process.
   */
  loops?: number;
  /** Store options that differ from the defaults (`fairWrites`, `shareCommits`: both on). */
  storeOptions?: { fairWrites?: boolean; shareCommits?: boolean };
}

/** The worker's report. */
export interface AppendWorkerReport {
  type: "done";
  worker: number;
  latenciesMs: number[];
  /** Epoch milliseconds (high resolution) of the first append's start and the last one's end. */
  startedAt: number;
  endedAt: number;
  /** Each writer's time from its first append's start to its last one's end, in ms. */
  writerElapsedMs: number[];
  errors: number;
  firstError: string | null;
  retries: number;
  busyErrors: number;
  waitedMs: number;
  /** Lock hand-offs to the next waiting process, and turns this writer queued for (store only). */
  handoffs: number;
  deferrals: number;
  /** Transactions this writer committed, its appends another process committed, and theirs it did. */
  commits: number;
  sharedWrites: number;
  servedWrites: number;
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
}

const now = () => performance.timeOrigin + performance.now();

process.once("message", async (request: AppendWorkerRequest) => {
  const loops = request.loops ?? 1;
  const writers = Array.from({ length: loops }, (_, l) => {
    const n = request.worker * loops + l;
    return {
      sessionId: request.sessionIds[l]!,
      marker: `w${n}`,
      messages: generateMessages(request.seed + n, request.count),
    };
  });
  /** Writer `l`'s `i`-th append, with a marker that makes its content unique in the run. */
  const input = (l: number, i: number) => {
    const w = writers[l]!;
    return toAppendInput(w.sessionId, w.messages[i]!, ` [${w.marker}-${i}]`);
  };
  let store: SessionStore | undefined;
  let append: (l: number, i: number) => unknown;
  let closeRaw = () => {};
  const retried = { retries: 0, waitedMs: 0 };
  if (request.mode === "store") {
    const s = await openSessionStore({ path: request.path, ...request.storeOptions });
    store = s;
    append = (l, i) => s.appendMessage(input(l, i));
  } else {
    const reference = request.mode === "reference";
    const db = openRawConnection(request.path, reference ? { busyTimeoutMs: REFERENCE_BUSY_TIMEOUT_MS } : {});
    const appender = new RawAppender(db);
    const once = (l: number, i: number) => appender.append(input(l, i));
    append = reference ? (l, i) => withReferenceRetries(() => once(l, i), retried) : once;
    closeRaw = () => db.close();
  }
  process.send?.({ type: "ready" });
  await new Promise<void>((resolve) => process.once("message", () => resolve()));

  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  const startedAt = now();
  const writerElapsedMs = await Promise.all(
    writers.map(async (_, l) => {
      const t = performance.now();
      for (let i = 0; i < request.count; i++) {
        const t0 = performance.now();
        try {
          await append(l, i);
        } catch (error) {
          errors++;
          firstError ??= errorText(error);
        }
        latencies.push(performance.now() - t0);
      }
      return performance.now() - t;
    }),
  );
  const endedAt = now();
  histogram.disable();
  const stats = store?.stats();
  await store?.close();
  closeRaw();
  const report: AppendWorkerReport = {
    type: "done",
    worker: request.worker,
    latenciesMs: latencies,
    startedAt,
    endedAt,
    writerElapsedMs,
    errors,
    firstError,
    retries: stats?.retries ?? retried.retries,
    busyErrors: stats?.busyErrors ?? retried.retries,
    waitedMs: stats?.waitedMs ?? retried.waitedMs,
    handoffs: stats?.handoffs ?? 0,
    deferrals: stats?.deferrals ?? 0,
    commits: stats?.groupsCommitted ?? 0,
    sharedWrites: stats?.sharedWrites ?? 0,
    servedWrites: stats?.servedWrites ?? 0,
    eventLoopP99Ms: histogram.percentile(99) / 1e6,
    eventLoopMaxMs: histogram.max / 1e6,
  };
  process.send?.(report, () => process.exit(0));
});
