// Opens a store with a read pool, reads through its workers (calls and a stream), closes it and
// then does nothing: it must exit by itself. Prints one JSON line: the active resources after
// close and what the reads returned. argv: <db path> [warm-open] [thread] (workers started by
// the `warmReaders` option of the open rather than by `readPool.warmUp`; the writes on a writer
// thread)
import { openSessionStore } from "@hermes/store";

const [path, how, writer = "inline"] = process.argv.slice(2);
const warmOpen = how === "warm-open";
const store = await openSessionStore({
  path,
  readers: 2,
  writer,
  ...(warmOpen ? { warmReaders: true } : {}),
});
const writerThread = store.writerThread?.worker;
const readyAtOpen = store.readPool.readyWorkers;
await store.createSession({ id: "s1", source: "cli" });
await store.appendMessages([1, 2, 3].map((i) => ({ sessionId: "s1", role: "user", content: `deploy ${i}` })));
if (!warmOpen) await store.readPool.warmUp(2);
// A prefix search: never "cheap" (answered in-thread), so a worker answers it.
const hits = (await store.searchMessages("deplo*")).length;
let streamed = 0;
for await (const _ of store.iterMessages("s1")) streamed++;
const served = store.readPool.served;
const workers = [0, 1].map((i) => store.readPool.workerAt(i));
const started = workers.map((w) => w !== undefined && w.threadId > 0);
await store.close();
// A worker's threadId is -1 once its thread has ended.
const endedAfterClose = workers.map((w) => w?.threadId === -1);
const writerEnded = writerThread === undefined ? null : writerThread.threadId === -1;
const resources = process.getActiveResourcesInfo();
process.stdout.write(
  `${JSON.stringify({ readyAtOpen, hits, streamed, served, started, endedAfterClose, writerEnded, resources })}\n`,
);
