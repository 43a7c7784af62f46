// One process of the title race: sets the same titles as its rivals on its own session, one
// round per "go" line on stdin, and prints one JSON line per round with what happened.
// argv: <db path> <session id> <rounds>

import { createInterface } from "node:readline";
import { openSessionStore } from "@hermes/store";

const [path, sessionId, roundsText] = process.argv.slice(2);
const rounds = Number(roundsText);
const store = await openSessionStore({ path });
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
process.stdout.write("ready\n");
for (let round = 0; round < rounds; round++) {
  await lines.next();
  try {
    const ok = await store.setSessionTitle(sessionId, `Shared title ${round}`);
    process.stdout.write(`${JSON.stringify({ round, ok })}\n`);
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ round, code: error.code ?? null, message: error.message })}\n`);
  }
}
await store.close();
process.exit(0);
