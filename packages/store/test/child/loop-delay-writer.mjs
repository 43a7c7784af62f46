// Measures this process's event-loop delay while one append waits for a lock another process
// holds. Prints one JSON line: the append's outcome and the delay percentiles in ms.
// argv: <db path> [options JSON for openSessionStore]
import { monitorEventLoopDelay } from "node:perf_hooks";
import { openSessionStore } from "@hermes/store";

const [path, optionsJson] = process.argv.slice(2);
const store = await openSessionStore({ path, ...(optionsJson ? JSON.parse(optionsJson) : {}) });
await store.ensureSession({ id: "waiter", source: "contention" });
process.stdout.write("ready\n");
// Wait for the parent to say the lock is held.
await new Promise((resolve) => process.stdin.once("data", resolve));
const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
const started = performance.now();
let outcome = "ok";
try {
  await store.appendMessage({ sessionId: "waiter", role: "user", content: "waited for the lock" });
} catch (error) {
  outcome = error.code ?? String(error);
}
const waitedMs = performance.now() - started;
// Let the histogram's timer fire once more, so a block that ended with the write is recorded.
await new Promise((resolve) => setTimeout(resolve, 50));
histogram.disable();
const ms = (ns) => ns / 1e6;
process.stdout.write(
  `${JSON.stringify({ outcome, waitedMs, p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max), stats: store.stats() })}\n`,
);
await store.close();
process.stdin.destroy();
