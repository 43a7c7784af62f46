// The other process of the change-feed tests: runs one JSON command per stdin line on its own
// store and prints `done <n>` after each (n counts from 1).
// argv: <db path>
// Commands: { "create": id, "source": s } | { "append": sessionId, "content": text }
//           | { "title": sessionId, "value": text }

import { createInterface } from "node:readline";
import { openSessionStore } from "@hermes/store";

const [path] = process.argv.slice(2);
const store = await openSessionStore({ path });
process.stdout.write("ready\n");
let n = 0;
for await (const line of createInterface({ input: process.stdin })) {
  const c = JSON.parse(line);
  if (c.create !== undefined) await store.createSession({ id: c.create, source: c.source ?? "cli" });
  else if (c.append !== undefined)
    await store.appendMessage({ sessionId: c.append, role: "user", content: c.content });
  else if (c.title !== undefined) await store.setSessionTitle(c.title, c.value);
  process.stdout.write(`done ${++n}\n`);
}
await store.close();
process.exit(0);
