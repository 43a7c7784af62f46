// Throwaway prototype behind docs/design/contention.md, "A fixed leader over a socket":
// measures what 8 writer processes reach when one of them (the leader) commits every append and
// the others send theirs over a Unix socket, against the store's own cross-process path, in one run.
// It has none of the safety a real design needs (no receipts, no leader death, no withdrawal).
//
//   pnpm run build && node docs/design/experiments/leader-socket.mjs [rounds] [writers] [appends]
//
// Arguments: rounds (default 2), writers (default 8), appends per writer (default 1000).
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("../../../", import.meta.url);
const { openSessionStore } = await import(new URL("packages/store/dist/index.js", root).href);
const { generateMessages, toAppendInput } = await import(
  new URL("apps/bench/dist/scenarios/message-fixtures.js", root).href
);
const Database = createRequire(new URL("packages/store/package.json", root))("better-sqlite3");

/** Calls `onMessage` with each newline-delimited JSON message read from `socket`. */
function readMessages(socket, onMessage) {
  let buffer = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk) => {
    buffer += chunk;
    for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
      onMessage(JSON.parse(buffer.slice(0, i)));
      buffer = buffer.slice(i + 1);
    }
  });
}

let cpu0;

async function child(req) {
  const messages = generateMessages(42 + req.worker, req.count);
  const input = (i) => toAppendInput(req.sessionId, messages[i], ` [w${req.worker}-${i}]`);
  let append;
  let finish = async () => {};
  if (req.mode === "store" || req.worker === 0) {
    // The store's own path for every writer, or the leader (which appends through its store).
    const store = await openSessionStore({
      path: req.path,
      ...(req.mode === "leader" ? { shareCommits: false } : {}),
    });
    append = (i) => store.appendMessage(input(i));
    finish = () => store.close();
    if (req.mode === "leader") {
      // Requests that arrive in one turn of the event loop become one appendMessages batch.
      let pending = [];
      const flush = () => {
        const batch = pending;
        pending = [];
        store.appendMessages(batch.map(([, m]) => m.input)).then(
          (ids) => {
            for (const [i, [c, m]] of batch.entries())
              c.write(`${JSON.stringify({ id: m.id, row: ids[i] })}\n`);
          },
          (e) => {
            for (const [c, m] of batch) c.write(`${JSON.stringify({ id: m.id, error: String(e) })}\n`);
          },
        );
      };
      const server = net.createServer((c) =>
        readMessages(c, (m) => {
          if (pending.push([c, m]) === 1) setImmediate(flush);
        }),
      );
      await new Promise((resolve) => server.listen(req.socket, resolve));
      finish = async () => {
        await new Promise((resolve) => process.once("message", resolve)); // every client is done
        const cpu = process.cpuUsage(cpu0);
        process.send({ type: "cpu", cpuMs: (cpu.user + cpu.system) / 1000 });
        server.close();
        await store.close();
      };
    }
  } else {
    const socket = net.connect(req.socket);
    await new Promise((resolve) => socket.once("connect", resolve));
    const waiting = new Map();
    let seq = 0;
    readMessages(socket, (m) => {
      const w = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.error) w.reject(new Error(m.error));
      else w.resolve(m.row);
    });
    append = (i) =>
      new Promise((resolve, reject) => {
        const id = ++seq;
        waiting.set(id, { resolve, reject });
        socket.write(`${JSON.stringify({ id, input: input(i) })}\n`);
      });
    finish = async () => socket.end();
  }
  process.send({ type: "ready" });
  await new Promise((resolve) => process.once("message", resolve));
  const latencies = [];
  cpu0 = process.cpuUsage();
  const t0 = performance.timeOrigin + performance.now();
  for (let i = 0; i < req.count; i++) {
    const t = performance.now();
    await append(i);
    latencies.push(performance.now() - t);
  }
  const t1 = performance.timeOrigin + performance.now();
  const cpu = process.cpuUsage(cpu0);
  process.send({ type: "done", latencies, t0, t1, cpuMs: (cpu.user + cpu.system) / 1000 });
  await finish();
  process.exit(0);
}

async function run(mode, writers, count) {
  const dir = mkdtempSync(join(tmpdir(), "leader-socket-"));
  const path = join(dir, "state.db");
  const setup = await openSessionStore({ path });
  for (let w = 0; w < writers; w++) await setup.createSession({ id: `w${w}`, source: "b", model: "b" });
  await setup.close();
  const children = [];
  const done = [];
  const exited = [];
  for (let w = 0; w < writers; w++) {
    const c = fork(new URL(import.meta.url), ["child"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const ready = new Promise((resolve) => c.once("message", resolve));
    exited.push(new Promise((resolve) => c.once("exit", resolve)));
    done.push(new Promise((resolve) => c.on("message", (m) => m.type === "done" && resolve(m))));
    c.send({ mode, path, socket: join(dir, "leader.sock"), sessionId: `w${w}`, worker: w, count });
    children.push({ c, ready });
    if (w === 0) await ready; // clients connect once the leader listens
  }
  await Promise.all(children.map((x) => x.ready));
  for (const { c } of children) c.send("go");
  const reports = await Promise.all(done);
  // The leader serves after its own appends are done: its CPU counts until every client is done.
  if (mode === "leader") {
    const leaderCpu = new Promise((resolve) =>
      children[0].c.on("message", (m) => m.type === "cpu" && resolve(m.cpuMs)),
    );
    children[0].c.send("stop");
    reports[0].cpuMs = await leaderCpu;
  }
  await Promise.all(exited);
  const all = reports.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const wall = Math.max(...reports.map((r) => r.t1)) - Math.min(...reports.map((r) => r.t0));
  const q = (p) => all[Math.min(all.length - 1, Math.floor(p * all.length))].toFixed(1);
  const db = new Database(path, { readonly: true });
  const rows = db.prepare("SELECT COUNT(*) FROM messages").pluck().get();
  const counters = db.prepare("SELECT SUM(message_count) FROM sessions").pluck().get();
  db.close();
  rmSync(dir, { recursive: true, force: true });
  const cpu = reports.reduce((a, r) => a + r.cpuMs, 0);
  console.log(
    `${mode.padEnd(6)} N=${writers}: ${Math.round(all.length / (wall / 1000))} appends/s, p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${all.at(-1).toFixed(1)} ms, CPU ${(cpu / all.length).toFixed(2)} ms/append, rows ${rows}/${writers * count}, message_count ${counters}`,
  );
}

if (process.argv[2] === "child") process.once("message", child);
else {
  const rounds = Number(process.argv[2] ?? 2);
  const writers = Number(process.argv[3] ?? 8);
  const count = Number(process.argv[4] ?? 1000);
  for (let r = 0; r < rounds; r++) {
    await run("store", writers, count);
    await run("leader", writers, count);
  }
}
