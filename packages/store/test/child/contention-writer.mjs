// One writer process of the contention tests: appends `count` messages to its own session
// through the store, one at a time, and prints one JSON line with what happened.
// argv: <db path> <tag> <count> [options JSON for openSessionStore, plus `waitForGo: true` to
// wait for a line on stdin after "ready" before appending, and `printAcks: true` to print
// "ack <i>" once append i has resolved]
import { openSessionStore } from "@hermes/store";

const [path, tag, countText, optionsJson] = process.argv.slice(2);
const count = Number(countText);
const { waitForGo = false, printAcks = false, ...options } = optionsJson ? JSON.parse(optionsJson) : {};
const store = await openSessionStore({ path, ...options });
const session = `writer-${tag}`;
const result = { tag, appended: 0, errors: [], latenciesMs: [], stats: null };
try {
  await store.ensureSession({ id: session, source: "contention" });
  process.stdout.write("ready\n");
  if (waitForGo) await new Promise((resolve) => process.stdin.once("data", resolve));
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    try {
      await store.appendMessage({
        sessionId: session,
        role: "user",
        content: `${tag} message ${i} contention`,
      });
      result.appended++;
      if (printAcks) process.stdout.write(`ack ${i}\n`);
    } catch (error) {
      result.errors.push({
        code: error.code,
        message: error.message,
        attempts: error.attempts,
        waitedMs: error.waitedMs,
      });
    }
    result.latenciesMs.push(performance.now() - started);
  }
} catch (error) {
  result.errors.push({ code: error.code, message: error.message });
}
result.stats = store.stats();
await store.close();
process.stdin.destroy();
process.stdout.write(`${JSON.stringify(result)}\n`);
