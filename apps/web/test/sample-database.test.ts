import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { openSessionStore } from "@hermes/store";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningSessionBrowser, serveSessionBrowser } from "../dist/index.js";
import { copyOfSample } from "./helpers/temp.js";

// The reference's own v11 sample (a copy): every listed session and its conversation answer.

let server: RunningSessionBrowser | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("the reference's sample database", () => {
  it("lists every session, opens each conversation and lineage, and leaves the file's bytes alone", async () => {
    const path = copyOfSample();
    const before = sha256(path);
    const store = await openSessionStore({ path });
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
    expect(sha256(path)).toBe(before);
  });
});
