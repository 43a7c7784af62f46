import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type FiltersAnswer,
  type MessagesAnswer,
  type RunningSessionBrowser,
  serveSessionBrowser,
} from "../dist/index.js";
import { readAnswer } from "./helpers/read-answer.js";
import { copyOfSample, fileState, SAMPLE_DB, V30_SAMPLE_DB } from "./helpers/temp.js";

// The API of a newer agent's file: filters that offer only what the list shows, and messages
// found by their stable id (v31's message_uid).
const V31_SAMPLE_DB = join(SAMPLE_DB, "../hermes-v31-sample.db");
const DC = "20260103_080000_dc0001";

let server: RunningSessionBrowser | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(fixture: string) {
  const path = copyOfSample(fixture);
  const before = fileState(path);
  server = await serveSessionBrowser({ db: path, port: 0 });
  const s = server;
  const get = (p: string) => fetch(`${s.origin}${p}`, { headers: { authorization: `Bearer ${s.token}` } });
  return { get, unchanged: () => expect(fileState(path)).toEqual(before) };
}

describe("the filters offer only what the session list can show", () => {
  it.each([
    ["v30", V30_SAMPLE_DB, ["homeassistant", "matrix"]],
    ["v31", V31_SAMPLE_DB, ["cron", "homeassistant", "matrix"]],
  ])(
    "%s: no source whose sessions are all archived or hidden, and each one offered lists a session",
    async (_n, fixture, unlisted) => {
      const { get, unchanged } = await serve(fixture);
      const filters = await readAnswer<FiltersAnswer>(await get("/api/filters"));
      for (const source of unlisted) expect(filters.sources).not.toContain(source);
      expect(filters.sources).toContain("cli");
      for (const source of filters.sources) {
        const page = await readAnswer<{ sessions: unknown[] }>(await get(`/api/sessions?source=${source}`));
        expect(page.sessions.length, source).toBeGreaterThan(0);
      }
      for (const model of filters.models) {
        const page = await readAnswer<{ sessions: unknown[] }>(
          await get(`/api/sessions?model=${encodeURIComponent(model)}`),
        );
        expect(page.sessions.length, model).toBeGreaterThan(0);
      }
      unchanged();
    },
  );
});

describe("messages by stable id (v31)", () => {
  it("?uid= answers the page around the current version of the message; an unknown uid is 404", async () => {
    const { get, unchanged } = await serve(V31_SAMPLE_DB);
    // Rows 100 (superseded, not displayed) and 103 (active) share this uid.
    const page = await readAnswer<MessagesAnswer>(
      await get(`/api/sessions/${DC}/messages?uid=a787d7f5b2534171bc07984b5aaf4089&limit=3`),
    );
    expect(page.messages.map((m) => m.id)).toEqual([101, 102, 103]);
    expect(page.after).toBe(0);
    expect(page.messages.find((m) => m.message_uid === "a787d7f5b2534171bc07984b5aaf4089")?.id).toBe(103);
    const early = await readAnswer<MessagesAnswer>(
      await get(`/api/sessions/${DC}/messages?uid=3e591f29c7834237aa44810e56917b59&limit=1`),
    );
    expect(early.messages.map((m) => m.id)).toEqual([101]);
    const missing = await get(`/api/sessions/${DC}/messages?uid=00000000000000000000000000000000`);
    expect(missing.status).toBe(404);
    unchanged();
  });
});
