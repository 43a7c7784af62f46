import { availableParallelism } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { type RunningChild, startChild } from "./helpers/child-process.js";
import { tempDir } from "./helpers/temp-dir.js";

const ROUNDS = Number(process.env.HERMES_CRASH_ROUNDS ?? 200);
/**
 * Writers started ahead of their round: starting a writer is mostly Node loading its modules,
 * which the next ones do while the current round writes, dies and is checked (one core is left
 * to the round's writer, so that its writes run as fast as before). A writer waits for "go"
 * before it opens the file, so only one ever touches it at a time.
 */
const AHEAD = Math.max(1, availableParallelism() - 1);

/** A writer of round `round`, loading its modules; it opens the file when told to go. */
function startWriter(path: string, round: number): RunningChild {
  return startChild("crash-writer.mjs", [path, String(round % 4)]);
}

/** Lets a started writer open the file and write, then SIGKILLs it `ms` after it is ready. */
async function runAndKill(writer: RunningChild, ms: number): Promise<void> {
  writer.process.stdin?.write("go\n");
  await writer.waitForLine("ready");
  await sleep(ms);
  writer.process.kill("SIGKILL");
  const { code, signal, stderr } = await writer.exited;
  if (signal !== "SIGKILL") throw new Error(`writer exited on its own (code ${code}): ${stderr}`);
}

function checkFile(path: string): { rows: number } {
  const db = new Database(path);
  try {
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    for (const t of ["messages_fts", "messages_fts_trigram"]) {
      db.prepare(`INSERT INTO ${t}(${t}) VALUES('integrity-check')`).run();
    }
    const torn = db
      .prepare(
        "SELECT COUNT(*) FROM messages WHERE content NOT LIKE '%|len=' || (instr(content, '|len=') - 1)",
      )
      .pluck()
      .get();
    expect(torn).toBe(0);
    const mismatched = db
      .prepare(
        `SELECT COUNT(*) FROM sessions s WHERE message_count != (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)
           OR tool_call_count != (SELECT COALESCE(SUM(json_array_length(tool_calls)), 0) FROM messages m
                                   WHERE m.session_id = s.id AND m.tool_calls IS NOT NULL)`,
      )
      .pluck()
      .get();
    expect(mismatched).toBe(0);
    return { rows: db.prepare("SELECT COUNT(*) FROM messages").pluck().get() as number };
  } finally {
    db.close();
  }
}

describe("crash safety", () => {
  it(
    `a writer SIGKILLed at random points ${ROUNDS} times: the file always opens clean and consistent`,
    async () => {
      const path = join(tempDir(), "state.db");
      const writers: RunningChild[] = [];
      try {
        let lastRows = 0;
        for (let round = 0; round < ROUNDS; round++) {
          while (writers.length < Math.min(AHEAD + 1, ROUNDS - round)) {
            writers.push(startWriter(path, round + writers.length));
          }
          await runAndKill(writers.shift() as RunningChild, Math.floor(Math.random() * 40));
          const store = await openSessionStore({ path });
          await store.close();
          const { rows } = checkFile(path);
          // Acknowledged rows are never lost: the count only grows.
          expect(rows).toBeGreaterThanOrEqual(lastRows);
          lastRows = rows;
        }
        expect(lastRows).toBeGreaterThan(0);
      } finally {
        // Writers started ahead of a round that failed never opened the file.
        for (const w of writers) w.process.kill("SIGKILL");
      }
    },
    15 * 60_000,
  );
});
