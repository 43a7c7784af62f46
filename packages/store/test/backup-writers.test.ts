// A backup taken while three real processes keep appending (the store, and two writers that
// use the reference's own SQL): the snapshot passes every check, holds one instant (each
// session's counters equal its rows, each writer's rows have no gap), the writers see no error,
// and the largest write stall during the backup is reported. In rollback-journal mode the
// snapshot's read lock holds writers off for its duration: measured, not hidden.
import { join } from "node:path";
import { backupTo, restoreFrom } from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { type RunningChild, startChild } from "./helpers/child-process.js";
import { copyOfFixture, SAMPLE_DB, tempDir } from "./helpers/temp-dir.js";

interface SteadyResult {
  tag: string;
  kind: string;
  appended: number;
  errors: string[];
  writes: Array<[number, number]>;
}

/** Grows the sample to `extra` more messages (with its own triggers filling both FTS tables). */
function grow(path: string, extra: number, journalMode: "wal" | "delete"): void {
  const db = new Database(path);
  db.pragma(`journal_mode = ${journalMode}`);
  const insert = db.prepare(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
  );
  db.prepare("INSERT INTO sessions (id, source, started_at) VALUES ('bulk', 'cli', 1)").run();
  db.transaction(() => {
    for (let i = 0; i < extra; i++)
      insert.run("bulk", `bulk message ${i} about docker builds and 记忆 ${i % 97}`, i);
    db.prepare("UPDATE sessions SET message_count = ? WHERE id = 'bulk'").run(extra);
  })();
  db.close();
}

/** Rows of the writers' sessions in a file, checked for one instant: counters = rows, no gaps. */
function writerSessions(
  path: string,
): Array<{ id: string; rows: number; counter: number; tools: number; toolRows: number; gapless: boolean }> {
  const db = new Database(path, { readonly: true });
  try {
    const sessions = db
      .prepare("SELECT id, message_count, tool_call_count FROM sessions WHERE id LIKE 'steady-%' ORDER BY id")
      .all() as Array<{ id: string; message_count: number; tool_call_count: number }>;
    return sessions.map((s) => {
      const contents = db
        .prepare("SELECT content, tool_calls FROM messages WHERE session_id = ? ORDER BY id")
        .all(s.id) as Array<{
        content: string;
        tool_calls: string | null;
      }>;
      const indexes = contents.map((c) => Number(c.content.split(" ").at(-1)));
      return {
        id: s.id,
        rows: contents.length,
        counter: s.message_count,
        tools: s.tool_call_count,
        toolRows: contents.filter((c) => c.tool_calls !== null).length,
        gapless: indexes.every((n, i) => n === i),
      };
    });
  } finally {
    db.close();
  }
}

async function backupUnderWriters(journalMode: "wal" | "delete", kinds: readonly string[]) {
  const source = copyOfFixture(SAMPLE_DB, 0o600);
  grow(source, 30_000, journalMode);
  const writers: RunningChild[] = kinds.map((kind, i) =>
    startChild("steady-writer.mjs", [source, kind, `${kind}${i}`, "10"]),
  );
  try {
    await Promise.all(writers.map((w) => w.waitForLine("ready")));
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    const backup = await backupTo(join(tempDir(), "backups"), { source });
    const ended = Date.now();
    await new Promise((r) => setTimeout(r, 300));
    for (const w of writers) w.process.stdin?.write("stop\n");
    await Promise.all(writers.map((w) => w.exited));
    const results = writers.map((w) => w.result<SteadyResult>());
    // A write stalled by the backup is one that was under way at some point of its window.
    const during = results.flatMap((r) => r.writes.filter(([at, ms]) => at + ms >= started && at <= ended));
    const stallMs = Math.max(...during.map(([, ms]) => ms));
    const others = results.flatMap((r) =>
      r.writes.filter(([at, ms]) => !(at + ms >= started && at <= ended)),
    );
    const stallOutsideMs = Math.max(0, ...others.map(([, ms]) => ms));
    const completedDuring = results.map(
      (r) => r.writes.filter(([at, ms]) => at + ms > started && at + ms < ended).length,
    );
    const target = join(tempDir(), "state.db");
    await restoreFrom(backup.archive, { target });
    return {
      source,
      backup,
      results,
      stallMs,
      stallOutsideMs,
      completedDuring,
      windowMs: ended - started,
      target,
    };
  } finally {
    for (const w of writers) if (w.process.exitCode === null) w.process.kill();
  }
}

describe("a backup while three processes append", () => {
  it("WAL: one instant, every check passed, no writer error, writes go on during the backup", async () => {
    const run = await backupUnderWriters("wal", ["store", "reference", "reference"]);
    console.info(
      `backup under 3 writers (WAL, 30,109 messages): ${run.windowMs} ms, largest write stall during it ${run.stallMs.toFixed(1)} ms (outside it ${run.stallOutsideMs.toFixed(1)} ms), writes completed during it ${run.completedDuring.join("/")}`,
    );
    expect(run.results.flatMap((r) => r.errors)).toEqual([]);
    expect(run.backup.manifest.snapshot.integrity).toBe("ok");
    expect(run.backup.manifest.snapshot.fts.map((f) => f.result)).toEqual(["ok", "ok"]);
    const sessions = writerSessions(run.target);
    expect(sessions).toHaveLength(3);
    for (const s of sessions) {
      expect(s.gapless).toBe(true);
      expect(s.counter).toBe(s.rows);
      expect(s.tools).toBe(s.id.includes("reference") ? s.toolRows : 0);
    }
    // The snapshot is of an instant between the first and the last write.
    const total = sessions.reduce((n, s) => n + s.rows, 0);
    const final = writerSessions(run.source).reduce((n, s) => n + s.rows, 0);
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThan(final);
    expect(run.backup.manifest.counts.messages).toBe(30_109 + total);
    // In WAL mode the snapshot's read transaction holds no writer up: each went on writing.
    if (run.windowMs > 500) for (const n of run.completedDuring) expect(n).toBeGreaterThan(0);
  }, 120_000);

  it("rollback journal: one instant and no writer error; the stall is the snapshot's read lock", async () => {
    const run = await backupUnderWriters("delete", ["reference", "reference", "reference"]);
    console.info(
      `backup under 3 writers (rollback journal, 30,109 messages): ${run.windowMs} ms, snapshot ${run.backup.manifest.timings.snapshotMs} ms, largest write stall during it ${run.stallMs.toFixed(1)} ms (outside it ${run.stallOutsideMs.toFixed(1)} ms)`,
    );
    expect(run.results.flatMap((r) => r.errors)).toEqual([]);
    expect(run.backup.manifest.source.journalMode).toBe("delete");
    expect(run.backup.manifest.snapshot.integrity).toBe("ok");
    for (const s of writerSessions(run.target)) {
      expect(s.gapless).toBe(true);
      expect(s.counter).toBe(s.rows);
      expect(s.tools).toBe(s.toolRows);
    }
  }, 120_000);
});
