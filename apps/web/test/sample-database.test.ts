import { openSessionStore } from "@hermes/store";
import { afterEach, describe, expect, it } from "vitest";
import {
  type MessagesAnswer,
  type RunningSessionBrowser,
  type SearchAnswer,
  type SessionAnswer,
  type SessionsAnswer,
  serveSessionBrowser,
} from "../dist/index.js";
import { readAnswer } from "./helpers/read-answer.js";
import { copyOfSample, fileState, V30_SAMPLE_DB } from "./helpers/temp.js";

// The reference's own v11 sample (a copy): every listed session and its conversation answer.

let server: RunningSessionBrowser | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the reference's sample database", () => {
  it("lists every session, opens each conversation and lineage, and leaves the file's bytes, mode and folder alone", async () => {
    const path = copyOfSample(undefined, 0o644);
    const before = fileState(path);
    const store = await openSessionStore({ path, readOnly: true });
    const all = await store.sessionCount();
    const messages = await store.messageCount();
    await store.close();
    server = await serveSessionBrowser({ db: path, port: 0 });
    const get = async <T>(p: string) => {
      const res = await fetch(`${server!.origin}${p}`, {
        headers: { authorization: `Bearer ${server!.token}` },
      });
      expect(res.status, p).toBe(200);
      return readAnswer<T>(res);
    };
    const page = await get<SessionsAnswer>("/api/sessions?limit=200");
    expect(page.nextCursor).toBeNull();
    const listed = page.sessions;
    // Every session is either listed or counted in the chain of a listed one.
    expect(listed.length + listed.reduce((n, s) => n + s.chain_sessions, 0)).toBe(all);
    let seen = 0;
    for (const s of listed) {
      const { lineage } = await get<SessionAnswer>(`/api/sessions/${encodeURIComponent(s.id)}`);
      for (const id of [s.id, ...lineage.descendants.filter((d) => d.link !== "branch").map((d) => d.id)]) {
        const m = await get<MessagesAnswer>(`/api/sessions/${encodeURIComponent(id)}/messages?limit=500`);
        expect(m.before + m.messages.length + m.after).toBe(m.messages.length);
        seen += m.messages.length;
      }
    }
    expect(seen).toBe(messages);
    expect((await get<SearchAnswer>("/api/search?q=docker")).hits.length).toBeGreaterThan(0);
    await server.close();
    server = undefined;
    // No -wal/-shm, no sidecar folder, no chmod: serving is a read-only open.
    expect(fileState(path)).toEqual(before);
  });
});

describe("a current agent's file (schema 30)", () => {
  it("is served read-only as the agent shows it, even with allowWrites, and left as it was", async () => {
    const path = copyOfSample(V30_SAMPLE_DB, 0o644);
    const before = fileState(path);
    server = await serveSessionBrowser({ db: path, port: 0, allowWrites: true });
    expect(server.writable).toBe(false);
    expect(server.readOnlyReason).toMatch(/schema|version|newer/i);
    const get = async <T>(p: string) => {
      const res = await fetch(`${server!.origin}${p}`, {
        headers: { authorization: `Bearer ${server!.token}` },
      });
      expect(res.status, p).toBe(200);
      return readAnswer<T>(res);
    };
    const page = await get<SessionsAnswer>("/api/sessions?limit=200");
    const ids = page.sessions.map((s) => s.id);
    expect(ids.length).toBeGreaterThan(5);
    // The agent's hidden and archived sessions are not listed.
    expect(ids).not.toContain("20260106_000000_matrix");
    expect(ids).not.toContain("20260106_000000_homeassistant");
    // Each conversation page holds the rows the agent displays (the store's getMessages).
    const store = await openSessionStore({ path, readOnly: true });
    try {
      for (const id of ids) {
        const m = await get<MessagesAnswer>(`/api/sessions/${encodeURIComponent(id)}/messages?limit=500`);
        expect(
          m.messages.map((x) => x.id),
          id,
        ).toEqual((await store.getMessages(id)).map((x) => x.id));
      }
    } finally {
      await store.close();
    }
    // Writes are not offered: the write routes are absent.
    const rename = await fetch(`${server.origin}/api/sessions/${encodeURIComponent(ids[0]!)}/title`, {
      method: "PUT",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "x" }),
    });
    expect(rename.status).toBe(403);
    await server.close();
    server = undefined;
    expect(fileState(path)).toEqual(before);
  });
});
