import { openSessionStore, type SessionStore } from "@hermes/store";
import { afterEach, describe, expect, it } from "vitest";
import { copyOfSample } from "./helpers/temp-dir.js";

// Listing, lineage and titles on a copy of the file the reference wrote
// (`shared/fixtures/hermes-v11-sample.db`): 13 sessions, 109 messages. Expected values are
// what the reference returns on that file.

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function sample(): Promise<SessionStore> {
  const store = await openSessionStore({ path: copyOfSample() });
  opened.push(store);
  return store;
}

const CLI001 = "20260101_090000_cli001"; // 'Fix Docker Build', ended by compression
const CLI002 = "20260101_093000_cli002"; // its continuation, 'Fix Docker Build #2'
const TG = "20260102_120000_tg0001";
const DC = "20260103_080000_dc0001"; // 90 messages
const CLI003 = "20260104_100000_cli003"; // ended 'branched'
const CLI004 = "20260104_100500_cli004"; // branch child of cli003
const CLI005 = "20260105_090000_cli005"; // live
const CLI006 = "20260105_090100_cli006"; // delegate child of cli005
const UNIVERSAL = ["cron", "homeassistant", "matrix", "signal", "acp"].map((s) => `20260106_000000_${s}`);
const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id);

describe("listing on the reference's sample file", () => {
  it("listSessionsRich: roots and the branch child, the compression root projected to its tip", async () => {
    const store = await sample();
    const rows = await store.listSessionsRich();
    expect(ids(rows)).toEqual([...UNIVERSAL, CLI005, CLI004, CLI003, DC, TG, CLI002]);
    expect(rows.map((r) => r.preview)).toEqual([
      "universal search test from cron",
      "universal search test from homeassistant",
      "universal search test from matrix",
      "universal search test from signal",
      "universal search test from acp",
      "Run the nightly cleanup",
      "Alternative plan: rebuild the FTS index offline",
      "Plan the database migration to v11",
      "Step 0: check the chat-send command and P2.0 config for depl...",
      "昨天和其他Agent的聊天记录，记忆断裂问题复现了",
      // 61 characters: the tip's preview is cut to 60 + "...".
      "The build passes now. Can we also cache the pnpm store layer...",
    ]);
    const projected = rows[10];
    expect(projected).toMatchObject({
      id: CLI002,
      _lineage_root_id: CLI001,
      started_at: 1767225600.0,
      ended_at: 1767231000.0,
      end_reason: "user_exit",
      title: "Fix Docker Build #2",
      message_count: 2,
      last_active: 1767229202.0,
      parent_session_id: null,
    });
    expect(rows[8]?.last_active).toBe(1767236490.0);
    expect(rows.filter((r) => "_lineage_root_id" in r)).toHaveLength(1);
  });

  it("listSessionsRich: raw rows, children and filters", async () => {
    const store = await sample();
    const raw = await store.listSessionsRich({ projectCompressionTips: false });
    expect(raw.at(-1)).toMatchObject({
      id: CLI001,
      end_reason: "compression",
      preview: "How do I fix the docker build? It fails on `pnpm install`.",
      last_active: 1767225604.0,
    });
    const all = await store.listSessionsRich({ includeChildren: true });
    expect(all).toHaveLength(13);
    expect(ids(all).slice(5, 7)).toEqual([CLI006, CLI005]);
    expect(ids(await store.listSessionsRich({ source: "cli" }))).toEqual([CLI005, CLI004, CLI003, CLI002]);
    expect(ids(await store.listSessionsRich({ excludeSources: ["cli", "telegram"] }))).toEqual([
      ...UNIVERSAL,
      DC,
    ]);
    expect(ids(await store.listSessionsRich({ limit: 3, offset: 5 }))).toEqual([CLI005, CLI004, CLI003]);
  });

  it("searchSessions: most recently active first, with last_active", async () => {
    const store = await sample();
    const rows = await store.searchSessions();
    expect(ids(rows)).toEqual([...UNIVERSAL, CLI006, CLI005, CLI004, CLI003, DC, TG, CLI002, CLI001]);
    expect(rows.map((r) => r.last_active).slice(-3)).toEqual([1767232804.0, 1767229202.0, 1767225604.0]);
    expect(ids(await store.searchSessions({ source: "telegram" }))).toEqual([TG]);
  });

  it("lineage: compression tip, resume target, id prefixes, counts", async () => {
    const store = await sample();
    expect(await store.getCompressionTip(CLI001)).toBe(CLI002);
    expect(await store.getCompressionTip(CLI003)).toBe(CLI003);
    expect(await store.getCompressionTip(CLI005)).toBe(CLI005);
    expect(await store.resolveResumeSessionId(CLI001)).toBe(CLI001);
    expect(await store.resolveSessionId("20260103")).toBe(DC);
    expect(await store.resolveSessionId("20260101_090")).toBe(CLI001);
    expect(await store.resolveSessionId("20260101")).toBeNull();
    expect(await store.resolveSessionId("20260106")).toBeNull();
    expect(await store.sessionCount({ source: "cli" })).toBe(6);
    expect(await store.messageCount({ sessionId: DC })).toBe(90);
  });

  it("resume walks to the continuation once the root's messages are cleared", async () => {
    const store = await sample();
    await store.clearMessages(CLI001);
    expect(await store.resolveResumeSessionId(CLI001)).toBe(CLI002);
  });
});

describe("titles on the reference's sample file", () => {
  it("resolves and continues the 'Fix Docker Build' lineage", async () => {
    const store = await sample();
    expect(await store.getSessionTitle(CLI001)).toBe("Fix Docker Build");
    expect(await store.resolveSessionByTitle("Fix Docker Build")).toBe(CLI002);
    expect(await store.resolveSessionByTitle("Fix Docker Build #2")).toBe(CLI002);
    expect(await store.getNextTitleInLineage("Fix Docker Build")).toBe("Fix Docker Build #3");
    expect(await store.getNextTitleInLineage("Fix Docker Build #2")).toBe("Fix Docker Build #3");
    // LIKE is ASCII case-insensitive: "#2" counts for a lower-case base too.
    expect(await store.getNextTitleInLineage("fix docker build")).toBe("fix docker build #3");
    expect((await store.getSessionByTitle("记忆断裂 调查"))?.id).toBe(TG);
  });

  it("setSessionTitle keeps titles unique and shows in the listing", async () => {
    const store = await sample();
    await expect(store.setSessionTitle(DC, "Fix Docker Build")).rejects.toMatchObject({
      code: "TITLE_CONFLICT",
      message: `Title 'Fix Docker Build' is already in use by session ${CLI001}`,
    });
    expect(await store.setSessionTitle(DC, await store.getNextTitleInLineage("Fix Docker Build"))).toBe(true);
    // The newest-started variant now is the discord session.
    expect(await store.resolveSessionByTitle("Fix Docker Build")).toBe(DC);
    expect(await store.getSessionTitle(DC)).toBe("Fix Docker Build #3");
    const row = (await store.listSessionsRich()).find((r) => r.id === DC);
    expect(row?.title).toBe("Fix Docker Build #3");
    expect(await store.setSessionTitle(TG, null)).toBe(true);
    expect(await store.getSessionByTitle("记忆断裂 调查")).toBeNull();
  });
});
