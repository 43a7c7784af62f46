/**
 * A writer process of the `backup` scenario: appends one message every `intervalMs` to its own
 * session until the parent says stop, and reports when each append started (epoch ms) and how
 * long it took. `reference` writes the way the Python agent does (raw better-sqlite3 in the
 * file's own journal mode, a 1 s busy handler, then 20–150 ms sleeps, 15 attempts at most);
 * `store` appends through `@hermes/store`.
 */
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { generateMessages, RawAppender, toAppendInput } from "../scenarios/message-fixtures.js";
import { errorText } from "./error-text.js";

/** The parent's instructions. */
export interface SteadyAppendRequest {
  mode: "store" | "reference";
  path: string;
  sessionId: string;
  intervalMs: number;
  seed: number;
}

/** The worker's report: `[startedAtEpochMs, latencyMs]` per append. */
export interface SteadyAppendReport {
  type: "done";
  writes: Array<[number, number]>;
  errors: number;
  firstError: string | null;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const lockError = (e: unknown) => /locked|busy/i.test(e instanceof Error ? e.message : "");

process.once("message", async (request: SteadyAppendRequest) => {
  const messages = generateMessages(request.seed, 4096);
  let append: (i: number) => Promise<unknown>;
  let close: () => Promise<void>;
  if (request.mode === "store") {
    const store = await openSessionStore({ path: request.path });
    await store.ensureSession({ id: request.sessionId, source: "bench" });
    append = (i) => store.appendMessage(toAppendInput(request.sessionId, messages[i % 4096]!, ` [${i}]`));
    close = () => store.close();
  } else {
    const db = new Database(request.path, { timeout: 1000 });
    db.pragma("synchronous = FULL");
    db.prepare("INSERT OR IGNORE INTO sessions (id, source, started_at) VALUES (?, 'bench', ?)").run(
      request.sessionId,
      Date.now() / 1000,
    );
    const appender = new RawAppender(db);
    append = async (i) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return appender.append(toAppendInput(request.sessionId, messages[i % 4096]!, ` [${i}]`));
        } catch (error) {
          if (!lockError(error) || attempt >= 15) throw error;
          await sleep(20 + Math.random() * 130);
        }
      }
    };
    close = async () => {
      db.close();
    };
  }
  let stop = false;
  process.once("message", () => {
    stop = true;
  });
  process.send?.({ type: "ready" });
  const writes: Array<[number, number]> = [];
  let errors = 0;
  let firstError: string | null = null;
  for (let i = 0; !stop; i++) {
    const at = Date.now();
    const t0 = performance.now();
    try {
      await append(i);
    } catch (error) {
      errors++;
      firstError ??= errorText(error);
    }
    writes.push([at, performance.now() - t0]);
    await sleep(request.intervalMs);
  }
  await close();
  const report: SteadyAppendReport = { type: "done", writes, errors, firstError };
  process.send?.(report);
  process.disconnect?.();
});
