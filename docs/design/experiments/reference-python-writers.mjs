// Experiment behind docs/design/contention.md, "Where the targets end": the Python original's write
// path itself (Python's sqlite3, its 1 s busy timeout and 20–150 ms sleeps), with the messages the
// `contention` benchmark writes. Creates a fresh state.db through the store, writes each writer's
// messages (the benchmark's seeds and markers) to a JSON file, then runs
// reference-python-writers.py with 1 process and with N, on a fresh file each.
//
//   pnpm run build && node docs/design/experiments/reference-python-writers.mjs [processes] [appends]
//
// Arguments: processes (default 8), appends per process (default 2000). Needs python3.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = new URL("../../../", import.meta.url);
const { openSessionStore } = await import(new URL("packages/store/dist/index.js", root).href);
const { generateMessages, toAppendInput, toolCallColumns } = await import(
  new URL("apps/bench/dist/scenarios/message-fixtures.js", root).href
);
const script = fileURLToPath(new URL("reference-python-writers.py", import.meta.url));

const processes = Number(process.argv[2] ?? 8);
const count = Number(process.argv[3] ?? 2000);
const dir = mkdtempSync(join(tmpdir(), "reference-python-"));
try {
  // Writer w's messages, as the contention benchmark's writer w appends them, in the columns
  // the reference's append_message writes, with the tool-call count its counter adds.
  const messages = Array.from({ length: processes }, (_, w) =>
    generateMessages(42 + w, count).map((m, i) => {
      const a = toAppendInput(`writer-${w}`, m, ` [w${w}-${i}]`);
      const { toolCalls, delta } = toolCallColumns(a);
      return [
        a.sessionId,
        a.role,
        a.content ?? null,
        a.toolCallId ?? null,
        toolCalls,
        a.toolName ?? null,
        a.tokenCount ?? null,
        a.finishReason ?? null,
        a.reasoning ?? null,
        delta,
      ];
    }),
  );
  const messagesPath = join(dir, "messages.json");
  writeFileSync(messagesPath, JSON.stringify(messages));
  for (const n of [1, processes]) {
    const path = join(dir, `state-${n}.db`);
    const store = await openSessionStore({ path });
    for (let w = 0; w < n; w++)
      await store.createSession({ id: `writer-${w}`, source: "bench", model: "bench" });
    await store.close();
    process.stdout.write(execFileSync("python3", [script, path, messagesPath, String(n), String(count)]));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
