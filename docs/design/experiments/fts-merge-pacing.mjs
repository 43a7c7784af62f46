// Experiment behind docs/design/contention.md, "Spreading the search index's merges": plain SQL
// on the reference schema (no store in the timed loop), transactions of several messages each,
// with FTS5's own merging ("default") against merging paced as the store does it ("paced":
// automerge 0 and usermerge 8 while writing, 'merge' of N pages before COMMIT, both back). Prints the
// time per transaction and the segments left in each FTS5 table.
//
//   pnpm run build && node docs/design/experiments/fts-merge-pacing.mjs [transactions] [rows] [pages] [checkpoint]
//
// Arguments: transactions (default 1500), rows per transaction (default 8), merge pages per
// paced transaction (default 16), a PASSIVE checkpoint every that many transactions (default 50,
// as the store does; the checkpoint itself is not timed).
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("../../../", import.meta.url);
const { openSessionStore } = await import(new URL("packages/store/dist/index.js", root).href);
const { generateMessages } = await import(
  new URL("apps/bench/dist/scenarios/message-fixtures.js", root).href
);
const Database = createRequire(new URL("packages/store/package.json", root))("better-sqlite3");

const transactions = Number(process.argv[2] ?? 1500);
const rows = Number(process.argv[3] ?? 8);
const pages = Number(process.argv[4] ?? 16);
const checkpointEvery = Number(process.argv[5] ?? 50);
const tables = ["messages_fts", "messages_fts_trigram"];
const messages = generateMessages(42, transactions * rows);

async function run(mode) {
  const dir = mkdtempSync(join(tmpdir(), "fts-pacing-"));
  try {
    const path = join(dir, "state.db");
    const store = await openSessionStore({ path });
    await store.createSession({ id: "s", source: "cli" });
    await store.close();
    const db = new Database(path);
    db.pragma("journal_mode = WAL");
    const insert = db.prepare(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', ?, ?, ?)",
    );
    const option = (name, value) =>
      tables.map((t) => db.prepare(`INSERT INTO ${t}(${t}, rank) VALUES ('${name}', ${value})`));
    const hold = [...option("automerge", 0), ...option("usermerge", 8)];
    const merge = option("merge", pages);
    const restore = [...option("usermerge", 4), ...option("automerge", 4)];
    const [begin, commit] = [db.prepare("BEGIN IMMEDIATE"), db.prepare("COMMIT")];
    const times = [];
    const start = performance.now();
    for (let t = 0; t < transactions; t++) {
      const t0 = performance.now();
      begin.run();
      if (mode === "paced") for (const s of hold) s.run();
      for (let r = 0; r < rows; r++) {
        const m = messages[t * rows + r];
        insert.run(m.role, `${m.content ?? ""} #${t}-${r}`, Date.now() / 1000);
      }
      if (mode === "paced") for (const s of [...merge, ...restore]) s.run();
      commit.run();
      times.push(performance.now() - t0);
      if ((t + 1) % checkpointEvery === 0) db.pragma("wal_checkpoint(PASSIVE)");
    }
    const elapsed = performance.now() - start;
    times.sort((a, b) => a - b);
    const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(2);
    const segments = tables.map((t) =>
      db.prepare(`SELECT count(DISTINCT segid) FROM ${t}_idx`).pluck().get(),
    );
    console.log(
      `${mode.padEnd(7)} ${Math.round((transactions * rows) / (elapsed / 1000))} rows/s; per transaction ` +
        `p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${times.at(-1).toFixed(1)} ms; segments ${segments.join(" + ")}`,
    );
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

for (let round = 0; round < 2; round++) for (const mode of ["default", "paced"]) await run(mode);
