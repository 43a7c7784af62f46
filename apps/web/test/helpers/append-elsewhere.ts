import { execFile } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const STORE = pathToFileURL(resolve(here, "../../../../packages/store/dist/index.js")).href;

/**
 * Writes to the database from another process, as the agent would while the browser is open:
 * a new session (when `createSession`) and one message.
 */
export async function appendElsewhere(
  path: string,
  m: { sessionId: string; content: string; createSession?: { source: string; title: string } },
): Promise<void> {
  const script = `
    const { openSessionStore } = await import(${JSON.stringify(STORE)});
    const [path, m] = [process.argv[1], JSON.parse(process.argv[2])];
    const store = await openSessionStore({ path });
    if (m.createSession) {
      await store.createSession({ id: m.sessionId, source: m.createSession.source });
      await store.setSessionTitle(m.sessionId, m.createSession.title);
    }
    await store.appendMessage({ sessionId: m.sessionId, role: "assistant", content: m.content });
    await store.close();`;
  await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script, path, JSON.stringify(m)]);
}
