import { openPostgresSessionStore } from "@hermes/postgres";
import { type PgCluster, startPgCluster } from "@hermes/postgres/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type MessagesAnswer,
  type RunningSessionBrowser,
  type SearchAnswer,
  type SessionAnswer,
  type SessionsAnswer,
  serveSessionBrowser,
} from "../dist/index.js";
import { readAnswer } from "./helpers/read-answer.js";

// `hermes-sessions serve --db postgres://…`: the same API over the PostgreSQL store.

let cluster: PgCluster;
let server: RunningSessionBrowser;

beforeAll(async () => {
  cluster = await startPgCluster();
  const store = await openPostgresSessionStore({ connectionString: cluster.connectionString });
  await store.createSession({ id: "pg_root", source: "cli", model: "gpt-5" });
  await store.setSessionTitle("pg_root", "Docker on PostgreSQL");
  for (let i = 0; i < 30; i++) {
    await store.appendMessage({
      sessionId: "pg_root",
      role: i % 2 ? "assistant" : "user",
      content: `docker step ${i}`,
    });
  }
  await store.endSession("pg_root", "compression");
  await store.createSession({ id: "pg_tip", source: "cli", parentSessionId: "pg_root" });
  await store.appendMessage({ sessionId: "pg_tip", role: "user", content: "我想去桂林" });
  await store.createSession({ id: "pg_other", source: "telegram" });
  await store.close();
  server = await serveSessionBrowser({ db: cluster.connectionString, port: 0 });
}, 120_000);

afterAll(async () => {
  await server?.close();
  cluster?.stop();
});

const get = async <T>(path: string) => {
  const res = await fetch(`${server.origin}${path}`, {
    headers: { authorization: `Bearer ${server.token}` },
  });
  expect(res.status, path).toBe(200);
  return readAnswer<T>(res);
};

describe("serving a PostgreSQL store", () => {
  it("lists sessions with chains, searches, pages messages and reads lineage", async () => {
    const page = await get<SessionsAnswer>("/api/sessions");
    // pg_other started after the chain's last message.
    expect(page.sessions.map((s) => s.id)).toEqual(["pg_other", "pg_root"]);
    expect(page.sessions[1]?.chain_sessions).toBe(1);
    const docker = await get<SearchAnswer>("/api/search?q=docker");
    expect(docker.hits.length).toBeGreaterThan(0);
    expect(docker.titles.pg_root).toBe("Docker on PostgreSQL");
    const cjk = await get<SearchAnswer>(`/api/search?q=${encodeURIComponent("桂林")}`);
    expect(cjk.hits.map((h) => h.session_id)).toEqual(["pg_tip"]);
    const last = await get<MessagesAnswer>("/api/sessions/pg_root/messages?from=end&limit=10");
    expect(last.messages.map((m) => m.content).at(-1)).toBe("docker step 29");
    expect([last.before, last.after]).toEqual([20, 0]);
    const session = await get<SessionAnswer>("/api/sessions/pg_root");
    expect(session.lineage.descendants.map((d) => [d.id, d.link])).toEqual([["pg_tip", "compression"]]);
  });
});
