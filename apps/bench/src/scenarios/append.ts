import { join } from "node:path";
import { openSessionStore } from "@hermes/store";
import { caseFromSamples, measureAlternating } from "../measure-alternating.js";
import { openRawConnection } from "../raw-connection.js";
import { latencyChart } from "../report/render-chart.js";
import type { Scenario } from "../scenario.js";
import { generateMessages, RawAppender, toAppendInput } from "./message-fixtures.js";

const SESSIONS = 10;

/** `appendMessage`, one message per transaction, both FTS tables, against raw SQL. */
export const appendScenario: Scenario = {
  name: "append",
  title: "appendMessage: one message per transaction, both FTS tables",
  description:
    "Sequential appendMessage calls (generated messages, 10% CJK, tool calls) on a fresh v11 file with both FTS tables and their triggers, next to the same INSERT + counter UPDATE in BEGIN IMMEDIATE with raw better-sqlite3 on an identical file.",
  async run(ctx) {
    const iterations = ctx.quick ? 100 : Math.max(200, Math.round(4000 * Math.min(1, ctx.scale * 2)));
    const warmup = ctx.quick ? 20 : 300;
    const storePath = join(ctx.workDir, "append-store.db");
    const rawPath = join(ctx.workDir, "append-raw.db");
    const ids = Array.from({ length: SESSIONS }, (_, i) => `append-session-${i}`);
    for (const path of [rawPath, storePath]) {
      const s = await openSessionStore({ path });
      for (const id of ids) await s.createSession({ id, source: "cli", model: "bench" });
      await s.close();
    }
    const store = await openSessionStore({ path: storePath });
    const raw = openRawConnection(rawPath);
    const appender = new RawAppender(raw);
    const messages = generateMessages(ctx.seed + 11, warmup + iterations);
    const input = (i: number) => toAppendInput(ids[i % SESSIONS]!, messages[i % messages.length]!);
    try {
      const samples = await measureAlternating(
        (i) => store.appendMessage(input(i)),
        (i) => appender.append(input(i)),
        { warmup, iterations, rounds: 10 },
      );
      const rows = raw.prepare("SELECT COUNT(*) FROM messages").pluck().get() as number;
      const c = caseFromSamples("appendMessage", "appendMessage", samples, {
        rawRows: rows,
        target: "≤1.15×",
      });
      return {
        cases: [c],
        notes: [
          `${iterations} measured appends per side after ${warmup} warm-up appends, in 10 alternating blocks; synchronous=FULL, WAL, foreign_keys=ON on both sides.`,
          "The baseline encodes tool_calls as JSON and runs a PASSIVE checkpoint every 50 writes, as the store does. For reference, the Python original takes about 450 µs per append on this kind of machine.",
        ],
        chart: latencyChart("appendMessage (one message per transaction)", [c]),
        parameters: { iterations, warmup, rounds: 10, sessions: SESSIONS },
      };
    } finally {
      await store.close();
      raw.close();
    }
  },
};
