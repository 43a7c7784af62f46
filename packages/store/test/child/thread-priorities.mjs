// Opens a store with 2 read workers and a short-CJK index build held back by another
// connection's write lock, and reports each thread's nice value (Linux /proc): the main thread,
// the threads that appeared meanwhile, and those left after close. argv: <db path>
import { readdirSync, readFileSync } from "node:fs";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";

const [path] = process.argv.slice(2);
const task = `/proc/${process.pid}/task`;
/** tid → nice (field 19 of /proc/<pid>/task/<tid>/stat, after the command name). */
function niceByThread() {
  const out = new Map();
  for (const tid of readdirSync(task)) {
    try {
      const stat = readFileSync(`${task}/${tid}/stat`, "utf8");
      out.set(tid, Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}
const niceOf = (map, tids) => [...map].filter(([tid]) => !tids.has(tid)).map(([, n]) => n);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const first = await openSessionStore({ path, readers: 0, cjkIndex: "off" });
await first.createSession({ id: "s1", source: "cli" });
await first.appendMessages([1, 2, 3].map((i) => ({ sessionId: "s1", role: "user", content: `桂林 ${i}` })));
await first.close();

const before = new Set(niceByThread().keys());
const holder = new Database(path);
holder.exec("BEGIN IMMEDIATE");
const store = await openSessionStore({ path, readers: 2, cjkIndex: "eager" });
await store.readPool.warmUp(2);
// The build waits for the lock on timers: its thread lives until the holder commits.
let building = false;
for (let i = 0; i < 100 && !building; i++) {
  building = store.stats().sideIndexes.cjk.active;
  if (!building) await sleep(20);
}
await sleep(200); // the builder's thread sets its priority first thing
const during = niceByThread();
holder.exec("COMMIT");
holder.close();
await store.close();
const after = niceByThread();
process.stdout.write(
  `${JSON.stringify({
    building,
    main: during.get(String(process.pid)),
    newThreads: niceOf(during, before),
    afterClose: niceOf(after, before),
  })}\n`,
);
