// Writes enough for the store's periodic checkpoint to start its checkpoint thread, closes the
// store and then does nothing: it must exit by itself. Prints one JSON line: whether the thread
// ran and ended, and the active resources after close. argv: <db path>
import { openSessionStore } from "@hermes/store";

const [path] = process.argv.slice(2);
const store = await openSessionStore({ path, readers: 0 });
await store.createSession({ id: "s1", source: "cli" });
for (let i = 0; i < 60; i++) await store.appendMessage({ sessionId: "s1", role: "user", content: `m${i}` });
const worker = store.checkpointThread?.worker;
const started = worker !== undefined && worker.threadId > 0;
await store.close();
// A worker's threadId is -1 once its thread has ended.
const ended = worker?.threadId === -1;
const checkpoints = store.stats().checkpoints;
const resources = process.getActiveResourcesInfo();
process.stdout.write(`${JSON.stringify({ started, ended, checkpoints, resources })}\n`);
