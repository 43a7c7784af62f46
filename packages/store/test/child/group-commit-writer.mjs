// Many concurrent async callers in one process, appending through group commit until killed.
// Each caller alternates single appends and 3-message batches; after each promise resolves it
// records the write to a side file (synchronously), so the parent can check, after a SIGKILL,
// that every resolved write is in the database whole.
// argv: <db path> <side file> <callers> [options JSON for openSessionStore]
import { appendFileSync } from "node:fs";
import { openSessionStore } from "@hermes/store";

const [path, sidePath, callersText, optionsJson] = process.argv.slice(2);
const callers = Number(callersText);
const store = await openSessionStore({ path, ...(optionsJson ? JSON.parse(optionsJson) : {}) });
for (let s = 0; s < 4; s++) await store.ensureSession({ id: `gc-${s}`, source: "group-commit" });
process.stdout.write("ready\n");
await Promise.all(
  Array.from({ length: callers }, async (_, c) => {
    const sessionId = `gc-${c % 4}`;
    for (let w = 0; ; w++) {
      // content "c<caller>/w<write>/<part>/<parts>": enough to check each write is whole.
      if (w % 2 === 0) {
        await store.appendMessage({ sessionId, role: "user", content: `c${c}/w${w}/0/1` });
      } else {
        await store.appendMessages(
          [0, 1, 2].map((p) => ({ sessionId, role: "assistant", content: `c${c}/w${w}/${p}/3` })),
        );
      }
      appendFileSync(sidePath, `c${c}/w${w}\n`);
    }
  }),
);
