import { spawn } from "node:child_process";
import { join } from "node:path";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers/temp-dir.js";

const CHILD = join(import.meta.dirname, "child", "crash-writer.mjs");
const ROUNDS = Number(process.env.HERMES_CRASH_ROUNDS ?? 200);

/** Starts a writer, lets it run for `ms` after it is ready, then SIGKILLs it. */
function runAndKill(path: string, tag: string, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, path, tag], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.stdout.once("data", () => setTimeout(() => child.kill("SIGKILL"), ms));
    child.on("exit", (code, signal) => {
      if (signal === "SIGKILL") resolve();
      else reject(new Error(`writer exited on its own (code ${code}): ${stderr}`));
    });
  });
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
      let lastRows = 0;
      for (let round = 0; round < ROUNDS; round++) {
        await runAndKill(path, String(round % 4), Math.floor(Math.random() * 40));
        const store = await openSessionStore({ path });
        await store.close();
        const { rows } = checkFile(path);
        // Acknowledged rows are never lost: the count only grows.
        expect(rows).toBeGreaterThanOrEqual(lastRows);
        lastRows = rows;
      }
      expect(lastRows).toBeGreaterThan(0);
    },
    15 * 60_000,
  );
});
