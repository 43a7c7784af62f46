import { openSessionStore } from "@hermes/store";
import { resumeDataset } from "../data/datasets.js";
import { BIG_SESSION_ID, ensureDataset } from "../data/ensure-dataset.js";
import { caseFromSamples, measureAlternating } from "../measure-alternating.js";
import { openRawConnection } from "../raw-connection.js";
import { latencyChart } from "../report/render-chart.js";
import type { Scenario } from "../scenario.js";
import { missingMethod } from "../store-capability.js";

type Stored = Record<string, unknown> & { role: string; content: string | null; tool_calls: string | null };

function parseJson(text: unknown, fallback: unknown): unknown {
  if (typeof text !== "string" || text === "") return fallback;
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

const MEMORY_BLOCK = /<memory-context>[\s\S]*?<\/memory-context>/g;

/** The reference's conversation shape (SPEC.md §5 get_messages_as_conversation), by hand. */
function toConversation(rows: Stored[]): Array<Record<string, unknown>> {
  return rows.map((r) => {
    let content: unknown = r.content;
    if ((r.role === "user" || r.role === "assistant") && typeof content === "string") {
      content = (content.includes("<memory-context>") ? content.replace(MEMORY_BLOCK, "") : content).trim();
    }
    const m: Record<string, unknown> = { role: r.role, content };
    if (r.tool_call_id) m.tool_call_id = r.tool_call_id;
    if (r.tool_name) m.tool_name = r.tool_name;
    if (r.tool_calls) m.tool_calls = parseJson(r.tool_calls, []);
    if (r.role === "assistant") {
      if (r.reasoning) m.reasoning = r.reasoning;
      if (r.reasoning_content !== null) m.reasoning_content = r.reasoning_content;
      for (const key of ["reasoning_details", "codex_reasoning_items", "codex_message_items"]) {
        if (r[key]) m[key] = parseJson(r[key], null);
      }
    }
    return m;
  });
}

/** Loading a 20,000-message session, as a resume does. */
export const resumeScenario: Scenario = {
  name: "resume",
  title: "Resume a 20,000-message session",
  description:
    "getMessages and getMessagesAsConversation of one 20,000-message session, next to the same SELECT … ORDER BY timestamp, id with raw better-sqlite3 and the same row shaping (tool_calls parsed; the reference's conversation keys).",
  async run(ctx) {
    const data = await ensureDataset(resumeDataset(ctx), ctx.dataDir);
    const store = await openSessionStore({ path: data.path });
    const db = openRawConnection(data.path);
    const select = db.prepare("SELECT * FROM messages WHERE session_id = ? ORDER BY timestamp, id");
    const plan = ctx.quick
      ? { warmup: 2, iterations: 10, rounds: 4 }
      : { warmup: 3, iterations: 30, rounds: 6, budgetMs: 60_000 };
    try {
      const cases = [];
      for (const method of ["getMessages", "getMessagesAsConversation"] as const) {
        const missing = missingMethod(store, method);
        const ours =
          missing !== null
            ? () => Promise.reject(new Error(missing))
            : method === "getMessages"
              ? () => store.getMessages(BIG_SESSION_ID)
              : () => store.getMessagesAsConversation(BIG_SESSION_ID);
        const raw =
          method === "getMessages"
            ? () =>
                (select.all(BIG_SESSION_ID) as Stored[]).map((r) => ({
                  ...r,
                  tool_calls: r.tool_calls ? parseJson(r.tool_calls, []) : null,
                }))
            : () => toConversation(select.all(BIG_SESSION_ID) as Stored[]);
        const samples = await measureAlternating(ours, raw, plan);
        cases.push(caseFromSamples(method, method, samples, { messages: data.spec.bigSessionMessages }));
      }
      return {
        cases,
        notes: [
          `One session of ${data.spec.bigSessionMessages.toLocaleString("en-US")} generated messages (tool calls, 10% CJK) in a file of ${data.messages.toLocaleString("en-US")} messages.`,
        ],
        chart: latencyChart(
          `Resume a ${data.spec.bigSessionMessages.toLocaleString("en-US")}-message session`,
          cases,
        ),
        parameters: { ...plan, dataset: data.spec },
      };
    } finally {
      await store.close();
      db.close();
    }
  },
};
