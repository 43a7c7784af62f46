// Three rounds of: open the store, append 50 messages of 60 KB (the 50th runs a periodic
// checkpoint), close it. Prints a line after each
// close(): all three must appear, since code after `await store.close()` must run.
// argv: <db path>
import { openSessionStore } from "@hermes/store";

const [path] = process.argv.slice(2);
const body = "x".repeat(60_000);
for (let round = 1; round <= 3; round++) {
  const store = await openSessionStore({ path });
  if (round === 1) await store.createSession({ id: "s1", source: "cli" });
  for (let i = 0; i < 50; i++)
    await store.appendMessage({ sessionId: "s1", role: "user", content: `${round}.${i} ${body}` });
  await store.close();
  process.stdout.write(`${JSON.stringify({ round, messages: round * 50 })}\n`);
}
