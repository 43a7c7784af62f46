// Experiment behind docs/design/contention.md, "What 8 processes on 2 cores allow": the best case
// of any design where N writer processes hand their appends to one committing process, with no
// SQLite at all. One server process and N client processes over a Unix socket; each client spins
// for `client` µs (its own share of an append), sends a request and waits for the reply; the
// server takes every request that arrived in one turn of its event loop, spins `work` µs per
// request (a stand-in for the transaction), and replies to all. Prints the clients' latency.
//
//   node docs/design/experiments/closed-loop-ipc.mjs [clients] [work µs] [client µs] [requests]
//
// Arguments: clients (default 8), server work per request (default 300), client work per request
// (default 300), requests per client (default 1000).
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [role, socketPath] = process.argv.slice(2);
const spin = (us) => {
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
};

if (role === "server") {
  const work = Number(process.argv[4]);
  let pending = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    spin(work * batch.length);
    for (const client of batch) client.write("r");
  };
  net
    .createServer((client) =>
      client.on("data", (data) => {
        for (let i = 0; i < data.length; i++) if (pending.push(client) === 1) setImmediate(flush);
      }),
    )
    .listen(socketPath, () => process.send("ready"));
} else if (role === "client") {
  const [clientWork, count] = [Number(process.argv[4]), Number(process.argv[5])];
  const socket = net.connect(socketPath);
  await new Promise((resolve) => socket.once("connect", resolve));
  let replied = () => {};
  socket.on("data", () => replied());
  process.send("ready");
  await new Promise((resolve) => process.once("message", resolve));
  const latencies = [];
  for (let i = 0; i < count; i++) {
    spin(clientWork);
    const t = performance.now();
    await new Promise((resolve) => {
      replied = resolve;
      socket.write("q");
    });
    latencies.push(performance.now() - t);
  }
  process.send(latencies, () => process.exit(0));
} else {
  const clients = Number(process.argv[2] ?? 8);
  const work = Number(process.argv[3] ?? 300);
  const clientWork = Number(process.argv[4] ?? 300);
  const count = Number(process.argv[5] ?? 1000);
  const dir = mkdtempSync(join(tmpdir(), "closed-loop-"));
  const path = join(dir, "s.sock");
  const self = new URL(import.meta.url);
  try {
    const server = fork(self, ["server", path, String(work)]);
    await new Promise((resolve) => server.once("message", resolve));
    const kids = Array.from({ length: clients }, () =>
      fork(self, ["client", path, String(clientWork), String(count)]),
    );
    await Promise.all(kids.map((k) => new Promise((resolve) => k.once("message", resolve))));
    const results = kids.map((k) => new Promise((resolve) => k.once("message", resolve)));
    const t0 = performance.now();
    for (const k of kids) k.send("go");
    const all = (await Promise.all(results)).flat().sort((a, b) => a - b);
    const elapsed = performance.now() - t0;
    const q = (p) => all[Math.min(all.length - 1, Math.floor(p * all.length))].toFixed(1);
    console.log(
      `${clients} clients, ${work} + ${clientWork} µs per request: ${Math.round(all.length / (elapsed / 1000))}/s, ` +
        `p50 ${q(0.5)} ms, p90 ${q(0.9)} ms, p99 ${q(0.99)} ms, max ${all.at(-1).toFixed(1)} ms`,
    );
    server.kill();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
