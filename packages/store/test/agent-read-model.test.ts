import type { MessageRow, PortableSession, SessionStore } from "@hermes/store";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { type FileState, fileState } from "./helpers/file-state.js";
import { copyOfFixture, SAMPLE_DB, V30_SAMPLE_DB, V31_SAMPLE_DB } from "./helpers/temp-dir.js";

// The read model of every supported file version (`@hermes/core`'s SessionViewFields and
// MessageViewFields), asserted on copies of the three fixtures with the rows that
// shared/fixtures/UPSTREAM.md lists (v31 §3–8).
const DC = "20260103_080000_dc0001";
const CLI001 = "20260101_090000_cli001";
const CLI005 = "20260105_090000_cli005";
const CLI007 = "20260107_090000_cli007";
const CRON = "20260106_000000_cron";
const ARCHIVED = "20260106_000000_homeassistant";
const HIDDEN = "20260106_000000_matrix";
const TG = "20260102_120000_tg0001";

const SESSION_KEYS = [
  "pinned",
  "archived",
  "auto_archived",
  "hidden",
  "created_source",
  "last_read_at",
  "rewind_count",
];
const MESSAGE_KEYS = [
  "message_uid",
  "absorbed_message_uids",
  "tool_call_uids",
  "tool_call_uid",
  "view_state",
  "compressed_summary",
];

let opened: Array<{ store: SessionStore; path: string; before: FileState }> = [];

async function open(fixture: string): Promise<SessionStore> {
  const path = copyOfFixture(fixture);
  const before = fileState(path);
  const store = await openSessionStore(path);
  opened.push({ store, path, before });
  return store;
}

afterEach(async () => {
  for (const { store, path, before } of opened) {
    await store.close();
    // Every read leaves the agent's file exactly as it was: bytes, mode, folder.
    expect(fileState(path)).toEqual(before);
  }
  opened = [];
});

/** Every row of a session, as the (lossless) export carries it. */
async function auditRows(store: SessionStore, id: string): Promise<PortableSession["messages"]> {
  for await (const s of store.exportStream({ sessionIds: [id] })) return s.messages;
  throw new Error(`no session ${id}`);
}

const byId = <T extends { id: number | null }>(rows: readonly T[], id: number): T => {
  const row = rows.find((r) => r.id === id);
  if (row === undefined) throw new Error(`no row ${id}`);
  return row;
};

describe("schema v31 (uids, auto-archive, an older build's row)", () => {
  it("a compacted original and its active copy share a uid; the summary has its own", async () => {
    const store = await open(V31_SAMPLE_DB);
    const rows = await auditRows(store, DC);
    expect(rows).toHaveLength(93);
    expect(byId(rows, 99)).toMatchObject({
      message_uid: "5bf4fac7d4424dcba2b601075f10685d",
      view_state: "superseded",
    });
    expect(byId(rows, 102)).toMatchObject({
      message_uid: "5bf4fac7d4424dcba2b601075f10685d",
      view_state: "active",
    });
    expect(byId(rows, 100).message_uid).toBe("a787d7f5b2534171bc07984b5aaf4089");
    expect(byId(rows, 103)).toMatchObject({
      message_uid: "a787d7f5b2534171bc07984b5aaf4089",
      view_state: "active",
    });
    expect(byId(rows, 11).view_state).toBe("compacted");
    const summary = byId(rows, 101);
    expect(summary).toMatchObject({
      message_uid: "3e591f29c7834237aa44810e56917b59",
      view_state: "active",
      compressed_summary: true,
    });
    // NULL in the file: no key in the portable row.
    expect(summary).not.toHaveProperty("absorbed_message_uids");
    expect(rows.filter((r) => r.message_uid === summary.message_uid)).toHaveLength(1);

    // The display read: summarized rows and the current copies, each with its state.
    const shown = await store.getMessages(DC);
    expect(shown).toHaveLength(91);
    expect(shown.map((m) => m.view_state).filter((s) => s === "compacted")).toHaveLength(88);
    expect(byId(shown, 101)).toMatchObject({
      message_uid: "3e591f29c7834237aa44810e56917b59",
      absorbed_message_uids: null,
      compressed_summary: true,
      view_state: "active",
    });
    expect(byId(shown, 102).message_uid).toBe("5bf4fac7d4424dcba2b601075f10685d");
  });

  it("tool calls pair by uid: row 3 answers row 2, rows 100 and 103 answer c29a of 99 and 102", async () => {
    const store = await open(V31_SAMPLE_DB);
    const cli = await store.getMessages(CLI001);
    expect(byId(cli, 2).tool_call_uids).toEqual({ call_1: "0e83ed773c2248838e42cb6dec0c41a0" });
    expect(byId(cli, 3)).toMatchObject({
      tool_call_id: "call_1",
      tool_call_uid: "0e83ed773c2248838e42cb6dec0c41a0",
    });
    expect(byId(cli, 2).tool_call_uid).toBeNull();
    const rows = await auditRows(store, DC);
    for (const [call, result] of [
      [99, 100],
      [102, 103],
    ] as const) {
      const map = JSON.parse(byId(rows, call).tool_call_uids ?? "null") as Record<string, string>;
      expect(map.c29a).toBe("824d7574cc694a6e87df48fc52dc7d28");
      expect(byId(rows, result).tool_call_uid).toBe(map.c29a);
    }
    const shown = await store.getMessages(DC);
    expect(byId(shown, 102).tool_call_uids).toEqual(
      JSON.parse(byId(rows, 99).tool_call_uids ?? "null") as Record<string, string>,
    );
  });

  it("the auto-archived cron session carries its flags and is left out of default listings", async () => {
    const store = await open(V31_SAMPLE_DB);
    expect(await store.getSession(CRON)).toMatchObject({
      archived: true,
      auto_archived: true,
      pinned: false,
      hidden: false,
      created_source: "cron",
      ended_at: null,
    });
    expect(await store.getSession(ARCHIVED)).toMatchObject({ archived: true, auto_archived: false });
    expect(await store.getSession(HIDDEN)).toMatchObject({ hidden: true, archived: false });
    expect(await store.getSession(CLI001)).toMatchObject({
      pinned: true,
      created_source: "cli",
      rewind_count: 0,
    });
    expect((await store.getSession(CLI007))?.rewind_count).toBe(1);

    const listed = (await store.listSessionsRich({ limit: 100, includeChildren: true })).map((s) => s.id);
    expect(listed).toHaveLength(12);
    expect(listed).not.toContain(CRON);
    expect(listed).not.toContain(ARCHIVED);
    expect(listed).not.toContain(HIDDEN);
    const withArchived = (
      await store.listSessionsRich({ limit: 100, includeChildren: true, includeArchived: true })
    )
      .map((s) => s.id)
      .sort();
    expect(withArchived).toEqual([...listed, CRON, ARCHIVED].sort());
    const searched = (await store.searchSessions({ limit: 100 })).map((s) => s.id);
    expect(searched).not.toContain(CRON);
    expect((await store.searchSessions({ limit: 100, includeArchived: true })).map((s) => s.id)).toContain(
      CRON,
    );
    const page = await store.listSessionPage({ limit: 100 });
    expect(page.sessions.map((s) => s.id)).not.toContain(CRON);
    expect(page.sessions.find((s) => s.id === CLI001)?.pinned).toBe(true);
  });

  it("reads back the row an older build appended, with the uid the file's trigger minted", async () => {
    const store = await open(V31_SAMPLE_DB);
    const rows = await store.getMessages(CLI005);
    expect(rows.map((m) => m.id)).toEqual([106, 118]);
    expect(byId(rows, 118)).toMatchObject({
      role: "assistant",
      content: "Nightly cleanup finished: nothing to prune.",
      timestamp: 1769904000.0,
      finish_reason: "stop",
      message_uid: "a5d1c1238c6e9f385b5e8f4c7ee4216d",
      absorbed_message_uids: null,
      tool_call_uids: null,
      tool_call_uid: null,
      view_state: "active",
      compressed_summary: false,
    });
    expect((await store.getSession(CLI005))?.message_count).toBe(2);
    const hits = await store.searchMessages("nightly");
    expect(hits.map((h) => [h.id, h.message_uid]).sort()).toEqual([
      [106, byId(rows, 106).message_uid],
      [118, "a5d1c1238c6e9f385b5e8f4c7ee4216d"],
    ]);
  });

  it("rewound rows keep uids of their own and read as superseded", async () => {
    const store = await open(V31_SAMPLE_DB);
    const rows = await auditRows(store, CLI007);
    const rewound = rows.filter((r) => r.view_state === "superseded");
    expect(rewound.map((r) => r.id)).toEqual([116, 117]);
    const uids = new Set(rows.map((r) => r.message_uid));
    expect(uids.size).toBe(rows.length);
    expect((await store.getMessages(CLI007)).map((m) => m.id)).toEqual([114, 115]);
  });

  it("no two active rows share a uid, and exactly two uids repeat across the file", async () => {
    const store = await open(V31_SAMPLE_DB);
    const all: Array<{ uid: string | undefined; state: string | undefined }> = [];
    for await (const s of store.exportStream()) {
      for (const m of s.messages) all.push({ uid: m.message_uid, state: m.view_state });
    }
    expect(all).toHaveLength(118);
    expect(all.every((r) => /^[0-9a-f]{32}$/.test(r.uid ?? ""))).toBe(true);
    expect(new Set(all.map((r) => r.uid)).size).toBe(116);
    const active = all.filter((r) => r.state === "active").map((r) => r.uid);
    expect(new Set(active).size).toBe(active.length);
  });

  it("a malformed uid list reads as null, never as an error", async () => {
    const path = copyOfFixture(V31_SAMPLE_DB);
    const db = new Database(path);
    db.exec(
      "UPDATE messages SET absorbed_message_uids = '[\"\", 3]', tool_call_uids = 'not json' WHERE id = 102",
    );
    db.exec('UPDATE messages SET absorbed_message_uids = \'["a","b"]\' WHERE id = 101');
    db.close();
    const store = await openSessionStore(path);
    try {
      const rows = await store.getMessages(DC);
      expect(byId(rows, 102)).toMatchObject({ absorbed_message_uids: null, tool_call_uids: null });
      expect(byId(rows, 101).absorbed_message_uids).toEqual(["a", "b"]);
    } finally {
      await store.close();
    }
  });
});

describe("the read model on v30 and v11 files: keys only where the file has the column", () => {
  it("v30: flags and view state, no uid keys and no auto_archived", async () => {
    const store = await open(V30_SAMPLE_DB);
    const session = await store.getSession(CLI001);
    expect(session).toMatchObject({ pinned: true, archived: false, hidden: false, created_source: null });
    expect(session).not.toHaveProperty("auto_archived");
    const rows = await store.getMessages(DC);
    for (const key of ["message_uid", "absorbed_message_uids", "tool_call_uids", "tool_call_uid"]) {
      expect(rows[0]).not.toHaveProperty(key);
    }
    expect(byId(rows, 11).view_state).toBe("compacted");
    expect(byId(rows, 101)).toMatchObject({ view_state: "active", compressed_summary: true });
    const audit = await auditRows(store, DC);
    expect(audit.filter((r) => r.view_state === "superseded").map((r) => r.id)).toEqual([99, 100]);
    const hit = (await store.searchMessages('"29 matches"'))[0];
    expect(hit).not.toHaveProperty("message_uid");
  });

  it("v11: no read-model key on any row", async () => {
    const path = copyOfFixture(SAMPLE_DB);
    const before = fileState(path);
    const store = await openSessionStore({ path, readOnly: true });
    try {
      const session = await store.getSession(TG);
      for (const key of SESSION_KEYS) expect(session).not.toHaveProperty(key);
      const rows: MessageRow[] = await store.getMessages(TG);
      expect(rows.length).toBeGreaterThan(0);
      for (const key of MESSAGE_KEYS) expect(rows[0]).not.toHaveProperty(key);
      const listed = await store.listSessionsRich({ limit: 1 });
      for (const key of SESSION_KEYS) expect(listed[0]).not.toHaveProperty(key);
      expect((await store.searchMessages("桂林"))[0]).not.toHaveProperty("message_uid");
    } finally {
      await store.close();
    }
    expect(fileState(path)).toEqual(before);
  });
});
