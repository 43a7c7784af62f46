import { openSessionStore } from "@hermes/store";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningSessionBrowser, serveSessionBrowser } from "../dist/index.js";
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
    const get = async (p: string) => {
      const res = await fetch(`${server!.origin}${p}`, {
        headers: { authorization: `Bearer ${server!.token}` },
      });
      expect(res.status, p).toBe(200);
      return res.json();
    };
    const page = await get("/api/sessions?limit=200");
    expect(page.nextCursor).toBeNull();
    const listed: Array<{ id: string; chain_sessions: number; message_count: number }> = page.sessions;
    // Every session is either listed or counted in the chain of a listed one.
    expect(listed.length + listed.reduce((n, s) => n + s.chain_sessions, 0)).toBe(all);
    let seen = 0;
    for (const s of listed) {
      const { lineage } = await get(`/api/sessions/${encodeURIComponent(s.id)}`);
      for (const id of [
        s.id,
        ...lineage.descendants
          .filter((d: { link: string }) => d.link !== "branch")
          .map((d: { id: string }) => d.id),
      ]) {
        const m = await get(`/api/sessions/${encodeURIComponent(id)}/messages?limit=500`);
        expect(m.before + m.messages.length + m.after).toBe(m.messages.length);
        seen += m.messages.length;
      }
    }
    expect(seen).toBe(messages);
    expect((await get("/api/search?q=docker")).hits.length).toBeGreaterThan(0);
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
    const get = async (p: string) => {
      const res = await fetch(`${server!.origin}${p}`, {
        headers: { authorization: `Bearer ${server!.token}` },
      });
      return { status: res.status, body: res.status === 200 ? await res.json() : null };
    };
    const page = (await get("/api/sessions?limit=200")).body;
    const ids: string[] = page.sessions.map((s: { id: string }) => s.id);
    expect(ids.length).toBeGreaterThan(5);
    // The agent's hidden and archived sessions are not listed.
    expect(ids).not.toContain("20260106_000000_matrix");
    expect(ids).not.toContain("20260106_000000_homeassistant");
    // Each conversation page holds the rows the agent displays (the store's getMessages).
    const store = await openSessionStore({ path, readOnly: true });
    try {
      for (const id of ids) {
        const m = (await get(`/api/sessions/${encodeURIComponent(id)}/messages?limit=500`)).body;
        expect(
          m.messages.map((x: { id: number }) => x.id),
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
