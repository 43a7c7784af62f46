// Appends self-checking messages to a store until killed. Used by the crash-loop test.
// argv: <db path> <writer tag>. The test starts writers ahead of their round, so that one loads
// its modules while the round before it runs: a writer touches the file only once it reads
// "go" on stdin, then prints "ready" and writes until it is killed.
import { once } from "node:events";
import { createInterface } from "node:readline";
import { openSessionStore } from "@hermes/store";

const [path, tag] = process.argv.slice(2);
const [line] = await once(createInterface({ input: process.stdin }), "line");
if (line !== "go") throw new Error(`crash-writer: expected "go" on stdin, got ${JSON.stringify(line)}`);
const store = await openSessionStore({ path });
const session = `crash-${tag}`;
await store.ensureSession({ id: session, source: "crash-test" });
process.stdout.write("ready\n");
for (let n = 0; ; n++) {
  const body = `${tag}:${n}:${"x".repeat(n % 500)}`;
  // The length is written into the content so a torn message would be detectable.
  await store.appendMessage({
    sessionId: session,
    role: n % 3 === 0 ? "assistant" : "user",
    content: `${body}|len=${body.length}`,
    toolCalls: n % 3 === 0 ? [{ id: `c${n}`, function: { name: "terminal" } }, { id: `d${n}` }] : null,
  });
  if (n % 7 === 0) await store.updateTokenCounts(session, { inputTokens: 3, outputTokens: 2 });
}
