// A process of the split word index's concurrency tests (argv: connection string, schema, role,
// count, go file, stop file, sealEvery). Opens the store, waits for the go file, then:
// `append` appends `count` messages one call each (its store seals when it crosses the mark),
// then goes on, slowly, until the registry holds a sealed range (at most 60 s): a seal's index
// builds wait for every older transaction on the server, so on a loaded machine they can outlast
// `count`;
// `search` runs ranked searches until the stop file exists; `seal` seals once. Prints a report.
import { existsSync } from "node:fs";
import { openPostgresSessionStore } from "@hermes/postgres";
import pg from "pg";

const [url, schema, role, count, go, stop, sealEvery] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const store = await openPostgresSessionStore({
  connectionString: url,
  schema,
  maxConnections: 3,
  wordIndex: { sealEvery: Number(sealEvery), refreshMs: 100, dropDelayMs: 200 },
});
const session = `w${process.pid}`;
if (role === "append") await store.createSession({ id: session, source: "child" });
while (!existsSync(go)) await sleep(5);
const out = { role, ids: [], errors: [], searches: 0, pageRepeats: 0, seal: null };
if (role === "append") {
  const registry = new pg.Client({ connectionString: url });
  await registry.connect();
  const sealedRanges = async () =>
    (await registry.query(`SELECT count(*)::int AS n FROM ${schema}.search_word_ranges WHERE hi IS NOT NULL`))
      .rows[0].n;
  const deadline = Date.now() + 60_000;
  for (let i = 0; i < Number(count) || ((await sealedRanges()) === 0 && Date.now() < deadline); i++) {
    if (i >= Number(count)) await sleep(20);
    try {
      const content = `common ${session}n${i}${i % 3 === 0 ? " docker" : ""}`;
      out.ids.push(await store.appendMessage({ sessionId: session, role: "user", content }));
    } catch (error) {
      out.errors.push(String(error?.message ?? error));
    }
  }
  await registry.end();
} else if (role === "search") {
  for (let i = 0; !existsSync(stop); i++) {
    try {
      const hits = await store.searchMessages(i % 2 ? "common" : "docker", {
        limit: 30,
        offset: (i * 7) % 40,
      });
      const ids = hits.map((h) => h.id);
      if (new Set(ids).size !== ids.length) out.pageRepeats++;
      out.searches++;
    } catch (error) {
      out.errors.push(String(error?.message ?? error));
    }
  }
} else {
  out.seal = await store.sealSearchIndex({ force: true });
}
await store.close();
process.stdout.write(JSON.stringify(out));
