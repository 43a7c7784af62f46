import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSessionStore, resolveStatePath } from "@hermes/store";

// The demo runs on a throwaway HERMES_HOME so it never touches the user's ~/.hermes.
const home = mkdtempSync(join(tmpdir(), "hermes-demo-"));
process.env.HERMES_HOME = home;
try {
  const path = resolveStatePath();
  console.log(`$ openSessionStore()   # HERMES_HOME=${home}`);
  const store = await openSessionStore();
  console.log(`opened ${path} (steps applied: ${store.migration.applied.join(", ")})`);
  console.log(`schema version: ${store.migration.toVersion}`);
  await store.createSession({ id: "demo-1", source: "cli", model: "hermes-4" });
  await store.appendMessage({ sessionId: "demo-1", role: "user", content: "Fix the Docker build" });
  await store.appendMessage({
    sessionId: "demo-1",
    role: "assistant",
    content: "Running the build.",
    toolCalls: [{ id: "call_1", type: "function", function: { name: "terminal", arguments: "{}" } }],
  });
  const s = await store.getSession("demo-1");
  console.log(`session demo-1: ${s?.message_count} messages, ${s?.tool_call_count} tool call`);
  await store.close();
} finally {
  rmSync(home, { recursive: true, force: true });
}
