import { join } from "node:path";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { type RunningChild, startChild } from "./helpers/child-process.js";
import { tempDir } from "./helpers/temp-dir.js";

// Title uniqueness across processes (test/child/title-setter.mjs): the check runs inside the
// write transaction, so the losers of a race see the winner's title and get TITLE_CONFLICT,
// never a raw unique-index error and never a second holder.

const PROCESSES = 4;
const ROUNDS = 5;

type Outcome = { round: number; ok?: boolean; code?: string | null; message?: string };

function outcomes(child: RunningChild): Outcome[] {
  return child.lines.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Outcome);
}

describe("setSessionTitle races between processes", () => {
  it("exactly one process wins each title; the others get TITLE_CONFLICT naming the winner", async () => {
    const path = join(tempDir("hermes-title-race-"), "state.db");
    const setup = await openSessionStore({ path });
    for (let i = 0; i < PROCESSES; i++) await setup.createSession({ id: `p${i}`, source: "race" });
    await setup.close();

    const children = Array.from({ length: PROCESSES }, (_, i) =>
      startChild("title-setter.mjs", [path, `p${i}`, String(ROUNDS)]),
    );
    await Promise.all(children.map((c) => c.waitForLine("ready")));
    for (let round = 0; round < ROUNDS; round++) {
      const before = children.map((c) => outcomes(c).length);
      for (const child of children) child.process.stdin?.write("go\n");
      // Wait until every process has reported this round before starting the next.
      while (children.some((c, i) => outcomes(c).length <= (before[i] ?? 0))) {
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    for (const child of children) {
      const { code, signal, stderr } = await child.exited;
      expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
    }

    const db = new Database(path, { readonly: true });
    const holders = db.prepare("SELECT id, title FROM sessions WHERE title IS NOT NULL").all() as Array<{
      id: string;
      title: string;
    }>;
    db.close();

    for (let round = 0; round < ROUNDS; round++) {
      const results = children.map((c, i) => ({ id: `p${i}`, ...outcomes(c)[round] }));
      const winners = results.filter((r) => r.ok === true);
      expect(winners).toHaveLength(1);
      const losers = results.filter((r) => r.ok !== true);
      for (const loser of losers) {
        expect(loser.code).toBe("TITLE_CONFLICT");
        expect(loser.message).toBe(
          `Title 'Shared title ${round}' is already in use by session ${winners[0]?.id}`,
        );
      }
    }
    // Each session holds at most one title, and no title has two holders.
    expect(new Set(holders.map((h) => h.title)).size).toBe(holders.length);
    const lastWinner = children.findIndex((c) => outcomes(c)[ROUNDS - 1]?.ok === true);
    expect(holders).toContainEqual({ id: `p${lastWinner}`, title: `Shared title ${ROUNDS - 1}` });
  });
});
