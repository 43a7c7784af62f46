import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type HermesStoreError,
  openSessionStore,
  SchemaNewerError,
  type SearchMessagesOptions,
  type SessionStore,
} from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { fileState } from "./helpers/file-state.js";
import { copyOfFixture, SAMPLE_DB, tempDir, V30_SAMPLE_DB } from "./helpers/temp-dir.js";
import { untouchedFixture } from "./helpers/untouched-fixture.js";

// hermes-v30-sample.db was written by upstream Hermes Agent at schema v30 (see the fixtures'
// README and shared/fixtures/UPSTREAM.md). Expected values are the agent's view of that file.
const DC = "20260103_080000_dc0001"; // compacted in place: 93 rows, 91 displayed, 3 replayed
const CLI001 = "20260101_090000_cli001"; // compression root, shares "You are Hermes."
const CLI002 = "20260101_093000_cli002"; // its continuation, same prompt
const CLI007 = "20260107_090000_cli007"; // rewound: rows 116-117 inactive
const TG = "20260102_120000_tg0001";
const ARCHIVED = "20260106_000000_homeassistant";
const HIDDEN = "20260106_000000_matrix";
const SHARED_PROMPT = "You are Hermes.";

describe("a file of a newer Hermes Agent (schema v30), opened by default", () => {
  // Each test ends with the file exactly as the agent left it: bytes, mode, folder.
  const fx = untouchedFixture(V30_SAMPLE_DB);

  it("opens read-only, says why, and keeps its rollback journal", () => {
    expect(fx.store.readOnly).toBe(true);
    expect(fx.store.readOnlyReason).toContain("schema version 30");
    expect(fx.store.access).toMatchObject({
      mode: "read-only",
      schemaVersion: 30,
      journalMode: "rollback",
      readOnlyAccess: "shared",
    });
    expect(fx.store.migration.newerVersion).toBe(true);
    expect(fx.store.fileProfile?.features).toMatchObject({
      visibility: true,
      systemPrompts: true,
      archived: true,
    });
    expect(fx.store.fileProfile?.ftsColumns.messages_fts).toEqual(["content", "tool_name", "tool_calls"]);
  });

  it("display reads show the compaction's summary and carried tail, not the superseded originals", async () => {
    const rows = await fx.store.getMessages(DC);
    expect(rows).toHaveLength(91);
    const ids = rows.map((m) => m.id);
    expect(ids).not.toContain(99);
    expect(ids).not.toContain(100);
    // The agent's display order: summary, then the tail carried after it.
    expect(ids.slice(-4)).toEqual([98, 101, 102, 103]);
    const [summary, call, result] = rows.slice(-3);
    expect(summary?.role).toBe("user");
    expect(summary).not.toHaveProperty("_compressed_summary");
    expect(summary?.content).toMatch(/^\[CONTEXT SUMMARY\]: Steps 0-28/);
    expect(call?.role).toBe("assistant");
    expect(Array.isArray(call?.tool_calls)).toBe(true);
    expect(result).toMatchObject({
      role: "tool",
      tool_call_id: "c29a",
      content: "found 29 matches in simulate.p2.test.ts",
    });
    // Rows carry the v11 columns only: none of the agent's own bookkeeping.
    expect(Object.keys(rows[0] ?? {})).not.toContain("active");
    expect(Object.keys(rows[0] ?? {})).not.toContain("display_identity");
  });

  it("the rewound turn is gone from every read", async () => {
    expect((await fx.store.getMessages(CLI007)).map((m) => m.content)).toEqual([
      "Rename the helper to parse_config",
      "Done: parse_config is used in 3 files.",
    ]);
    expect((await fx.store.getMessagesAsConversation(CLI007)).map((m) => m.content)).toEqual([
      "Rename the helper to parse_config",
      "Done: parse_config is used in 3 files.",
    ]);
    expect(await fx.store.searchMessages("deleted")).toEqual([]);
    expect(await fx.store.searchMessages("old tests")).toEqual([]);
    const md = await fx.store.exportSessionMarkdown(CLI007);
    expect(md).toContain("parse_config");
    expect(md).not.toContain("test_old_config");
    expect((await fx.store.exportSession(CLI007))?.messages.map((m) => m.id)).toEqual([114, 115]);
  });

  it("replay reads see the active rows only, by id", async () => {
    const conversation = await fx.store.getMessagesAsConversation(DC);
    expect(conversation.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(conversation[0]?.content).toMatch(/^\[CONTEXT SUMMARY\]/);
    expect(conversation[2]).toMatchObject({ tool_call_id: "c29a", tool_name: "search_files" });
    const window = await fx.store.getConversationWindow(DC);
    expect(window.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(window.omittedMessages).toBe(0);
    const anthropic = await fx.store.getMessagesAsAnthropic(DC);
    expect(anthropic.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    // With ancestors: the compression root's four rows, then the continuation's two.
    const lineage = await fx.store.getMessagesAsConversation(CLI002, { includeAncestors: true });
    expect(lineage).toHaveLength(6);
    expect(lineage[0]?.content).toContain("fix the docker build");
  });

  it("system prompts come through system_prompts, for all three sessions sharing one", async () => {
    for (const id of [CLI001, CLI002, CLI007]) {
      expect((await fx.store.getSession(id))?.system_prompt).toBe(SHARED_PROMPT);
    }
    expect((await fx.store.getSession(TG))?.system_prompt).toBe("You are Hermes. 请用中文回答。");
    expect((await fx.store.getSession(DC))?.system_prompt).toBeNull();
    expect((await fx.store.getMessagesAsAnthropic(CLI007)).system).toBe(SHARED_PROMPT);
    expect((await fx.store.exportSession(CLI002))?.system_prompt).toBe(SHARED_PROMPT);
    const exported = (await fx.store.exportAll()).find((s) => s.id === CLI001);
    expect(exported?.system_prompt).toBe(SHARED_PROMPT);
  });

  it("counters are the agent's: active rows", async () => {
    expect((await fx.store.getSession(DC))?.message_count).toBe(3);
    expect((await fx.store.getSession(CLI007))?.message_count).toBe(2);
    expect(await fx.store.messageCount({ sessionId: DC })).toBe(3);
    expect(await fx.store.messageCount({ sessionId: CLI007 })).toBe(2);
    // 117 rows: 88 summarized, 2 superseded (dc0001) and 2 rewound (cli007) are not active.
    expect(await fx.store.messageCount()).toBe(117 - 88 - 2 - 2);
    const bySource = await fx.store.usageStats({ groupBy: "source" });
    expect(bySource.find((r) => r.group === "discord")?.messages).toBe(3);
  });

  it("listings leave out archived and hidden sessions unless asked", async () => {
    const ids = (await fx.store.listSessionsRich({ limit: 100, includeChildren: true })).map((r) => r.id);
    expect(ids).toHaveLength(13);
    expect(ids).not.toContain(ARCHIVED);
    expect(ids).not.toContain(HIDDEN);
    const withArchived = (
      await fx.store.listSessionsRich({ limit: 100, includeChildren: true, includeArchived: true })
    ).map((r) => r.id);
    expect(withArchived).toContain(ARCHIVED);
    expect(withArchived).not.toContain(HIDDEN);
    const everything = await fx.store.listSessionsRich({
      limit: 100,
      includeChildren: true,
      includeArchived: true,
      includeHidden: true,
    });
    expect(everything).toHaveLength(15);
    const recent = (await fx.store.searchSessions({ limit: 100 })).map((r) => r.id);
    expect(recent).toHaveLength(13);
    expect(recent).not.toContain(HIDDEN);
    expect((await fx.store.searchSessions({ limit: 100, includeHidden: true })).map((r) => r.id)).toContain(
      HIDDEN,
    );
    // The compacted session: the agent's counter and its first displayed user message.
    const dc = (await fx.store.listSessionsRich({ limit: 100 })).find((r) => r.id === DC);
    expect(dc?.message_count).toBe(3);
    expect(dc?.preview).toMatch(/^Step 0: check the chat-send command/);
    // The compression root is shown as its tip, as on a v11 file.
    const tip = (await fx.store.listSessionsRich({ limit: 100 })).find((r) => r._lineage_root_id === CLI001);
    expect(tip?.id).toBe(CLI002);
    await expect(
      fx.store.listSessionsRich({ includeArchived: "yes" as unknown as boolean }),
    ).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });

  it("search uses the agent's indexes and never returns rows it no longer displays", async () => {
    // Row 100 (superseded) and row 103 (its carried copy) hold the same text: only 103 shows.
    expect((await fx.store.searchMessages('"29 matches"')).map((h) => h.id)).toEqual([103]);
    expect((await fx.store.searchMessages("parse_config")).map((h) => h.id).sort()).toEqual([114, 115]);
    const hit = (await fx.store.searchMessages("parse_config", { roleFilter: ["user"] }))[0];
    expect(hit?.snippet).toBe("Rename the helper to >>>parse_config<<<");
    expect(hit?.context.map((c) => c.role)).toEqual(["user", "assistant"]);
    // A summarized row is displayed, so it is found; with a source filter (sessions is a view).
    expect((await fx.store.searchMessages("P2.5", { sourceFilter: ["discord"] })).map((h) => h.id)).toEqual([
      26,
    ]);
    // Three or more CJK characters: the agent's trigram table.
    expect((await fx.store.searchMessages("记忆断裂")).map((h) => h.session_id)).toEqual([TG]);
    // One or two: a scan (the file is not ours to add an index to).
    expect((await fx.store.searchMessages("桂林")).map((h) => h.id)).toEqual([8]);
    expect((await fx.store.searchMessages("世界")).map((h) => h.id)).toEqual([9]);
  });

  it("search leaves out hidden and archived sessions, as the listings do, unless asked", async () => {
    const ids = async (q: string, o: SearchMessagesOptions = {}) =>
      (await fx.store.searchMessages(q, { limit: 100, ...o })).map((h) => h.id);
    // Row 110 is the hidden matrix session's only message, 111 the archived homeassistant one's.
    expect(await ids('"from matrix"')).toEqual([]);
    expect(await ids('"from matrix"', { includeHidden: true })).toEqual([110]);
    expect(await ids('"from matrix"', { includeArchived: true })).toEqual([]);
    expect(await ids('"from homeassistant"')).toEqual([]);
    expect(await ids('"from homeassistant"', { includeArchived: true })).toEqual([111]);
    expect(await ids('"from homeassistant"', { includeHidden: true })).toEqual([]);
    // Every session has such a message: the default leaves out exactly those two sessions.
    const everything = await fx.store.searchMessages("universal search test", {
      limit: 100,
      includeArchived: true,
      includeHidden: true,
    });
    const shown = await fx.store.searchMessages("universal search test", { limit: 100 });
    expect(everything.map((h) => h.session_id)).toEqual(expect.arrayContaining([HIDDEN, ARCHIVED]));
    expect(shown.map((h) => h.id)).toEqual(
      everything.filter((h) => h.session_id !== HIDDEN && h.session_id !== ARCHIVED).map((h) => h.id),
    );
    // Paging counts the sessions left out as absent, not as empty places.
    expect(
      (await fx.store.searchMessages("universal search test", { limit: 3, offset: 2 })).map((h) => h.id),
    ).toEqual(shown.slice(2, 5).map((h) => h.id));
    await expect(
      fx.store.searchMessages("matrix", { includeHidden: 1 as unknown as boolean }),
    ).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  it("paged reads give the display view; the export stream every row, with its view state", async () => {
    const all = (await fx.store.getMessages(DC)).map((m) => m.id);
    const paged: number[] = [];
    for await (const m of fx.store.iterMessages(DC, { pageSize: 7 })) paged.push(m.id);
    expect(paged).toEqual(all);
    const rest: number[] = [];
    for await (const m of fx.store.iterMessages(DC, { afterId: 98 })) rest.push(m.id);
    expect(rest).toEqual([101, 102, 103]);
    let streamed: Array<{ id: number; view_state?: string }> = [];
    for await (const s of fx.store.exportStream({ sessionIds: [DC] })) streamed = s.messages;
    // Lossless: the superseded originals 99 and 100 too, in (timestamp, id) order.
    expect(streamed.map((m) => m.id).sort((a, b) => a - b)).toEqual([...all, 99, 100].sort((a, b) => a - b));
    expect(
      streamed
        .filter((m) => m.view_state !== "superseded")
        .map((m) => m.id)
        .sort((a, b) => a - b),
    ).toEqual([...all].sort((a, b) => a - b));
    const out = join(tempDir(), "export.jsonl");
    const report = await fx.store.exportJsonl(out);
    expect(report.sessions).toBe(15);
    expect(report.messages).toBe(117);
    const lines = readFileSync(out, "utf8").trimEnd().split("\n");
    const root = lines
      .map((l) => JSON.parse(l) as { id?: string; system_prompt?: string; messages?: Array<{ id: number }> })
      .find((s) => s.id === CLI001);
    expect(root?.system_prompt).toBe(SHARED_PROMPT);
    const compacted = lines
      .map((l) => JSON.parse(l) as { id?: string; messages?: Array<{ id: number }> })
      .find((s) => s.id === DC);
    expect(compacted?.messages?.map((m) => m.id)).toEqual(streamed.map((m) => m.id));
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({ schema_version: 30 });
  });

  it("titles, lineage, ids and metadata read as on any file", async () => {
    expect(await fx.store.resolveSessionByTitle("Fix Docker Build")).toBe(CLI002);
    expect(await fx.store.getNextTitleInLineage("Fix Docker Build")).toBe("Fix Docker Build #3");
    expect(await fx.store.resolveSessionId("20260103")).toBe(DC);
    expect(await fx.store.getCompressionTip(CLI001)).toBe(CLI002);
    expect((await fx.store.getLineage(CLI002))?.session.link).toBe("compression");
    expect(await fx.store.getMeta("fts_storage_version")).toBe("3");
    expect(await fx.store.sessionCount()).toBe(15);
    expect((await fx.store.verifySearchIndex()).ok).toBe(true);
  });

  it("every write rejects with SCHEMA_NEWER naming both versions, and writes nothing", async () => {
    await expectEveryWriteRefused(fx.store, 30);
    expect(await fx.store.getSessionTitle(DC)).toBeNull();
    expect((await fx.store.getMessages(CLI007)).length).toBe(2);
  });
});

/** Calls every write method of `store` and expects each to reject with SCHEMA_NEWER (file at `version`). */
async function expectEveryWriteRefused(store: SessionStore, version: number, sid = DC): Promise<void> {
  // Each refusal names the operation in the user's words, never the method.
  const writes: Array<[string, string, () => Promise<unknown>]> = [
    ["createSession", "Creating a session", () => store.createSession({ id: "new", source: "cli" })],
    ["ensureSession", "Creating a session", () => store.ensureSession({ id: "new" })],
    ["endSession", "Ending a session", () => store.endSession(sid, "user_exit")],
    ["reopenSession", "Reopening a session", () => store.reopenSession(sid)],
    ["updateSystemPrompt", "Changing a system prompt", () => store.updateSystemPrompt(sid, "other")],
    ["updateTokenCounts", "Recording token counts", () => store.updateTokenCounts(sid, { inputTokens: 1 })],
    ["setSessionTitle", "Setting a title", () => store.setSessionTitle(sid, "Title")],
    [
      "appendMessage",
      "Adding a message",
      () => store.appendMessage({ sessionId: sid, role: "user", content: "hi" }),
    ],
    [
      "appendMessages",
      "Adding messages",
      () => store.appendMessages([{ sessionId: sid, role: "user", content: "hi" }]),
    ],
    ["clearMessages", "Clearing a session's messages", () => store.clearMessages(sid)],
    ["rebuildSearchIndex", "Rebuilding the search indexes", () => store.rebuildSearchIndex()],
    ["deleteSession", "Deleting a session", () => store.deleteSession(sid)],
    ["pruneSessions", "Pruning sessions", () => store.pruneSessions({ olderThanDays: 0 })],
    ["setMeta", "Writing metadata", () => store.setMeta("k", "v")],
    ["vacuum", "Compacting the file (VACUUM)", () => store.vacuum()],
    [
      "maybeAutoPruneAndVacuum",
      "Automatic pruning",
      () => store.maybeAutoPruneAndVacuum({ minIntervalHours: 0 }),
    ],
    ["importSessions", "Importing sessions", () => store.importSessions([])],
    ["forkSession", "Forking a session", () => store.forkSession(sid)],
  ];
  for (const [name, operation, write] of writes) {
    const error = await write().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error, name).toBeInstanceOf(SchemaNewerError);
    expect((error as HermesStoreError).code, name).toBe("SCHEMA_NEWER");
    expect((error as SchemaNewerError).fileVersion).toBe(version);
    expect((error as SchemaNewerError).supportedVersion).toBe(11);
    expect((error as Error).message, name).toMatch(new RegExp(`version ${version}.*version 11`));
    expect((error as Error).message, name).toMatch(
      new RegExp(`^${operation.replace(/[()]/g, "\\$&")} is refused: `),
    );
    expect((error as Error).message, name).toContain("whose gateway is its only writer");
    expect((error as Error).message, name).not.toContain(name);
  }
}

describe("a newer agent's file, other opens", () => {
  it("an explicit writable open fails with SCHEMA_NEWER and leaves the file as it was", async () => {
    const path = copyOfFixture(V30_SAMPLE_DB);
    const before = fileState(path);
    const error = await openSessionStore({ path, readOnly: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaNewerError);
    expect((error as Error).message).toMatch(/schema version 30.*version 11/);
    expect(fileState(path)).toEqual(before);
  });

  it("readOnly: true reads the same view and refuses writes with STORE_READ_ONLY", async () => {
    const path = copyOfFixture(V30_SAMPLE_DB, 0o600);
    const before = fileState(path);
    const store = await openSessionStore({ path, readOnly: true });
    try {
      expect(store.readOnlyReason).toContain("readOnly: true");
      expect(await store.getMessages(DC)).toHaveLength(91);
      const error = await store.setMeta("k", "v").catch((e: unknown) => e);
      expect((error as HermesStoreError).code).toBe("STORE_READ_ONLY");
    } finally {
      await store.close();
    }
    expect(fileState(path)).toEqual(before);
  });

  it("CJK searches (the agent's trigram table, a scan for short terms) leave hidden sessions out too", async () => {
    const path = copyOfFixture(V30_SAMPLE_DB);
    // The hidden session's message gains CJK text, through the agent's own FTS triggers.
    const db = new Database(path);
    db.prepare("UPDATE messages SET content = ? WHERE id = 110").run("漓江和桂林山水 from matrix");
    db.close();
    const store = await openSessionStore({ path, readOnly: true });
    try {
      const ids = async (q: string, o: SearchMessagesOptions = {}) =>
        (await store.searchMessages(q, { limit: 100, ...o })).map((h) => h.id);
      expect(await ids("漓江和桂林")).toEqual([]);
      expect(await ids("漓江和桂林", { includeHidden: true })).toEqual([110]);
      expect(await ids("桂林")).toEqual([8]);
      expect((await ids("桂林", { includeHidden: true })).sort((a, b) => a - b)).toEqual([8, 110]);
    } finally {
      await store.close();
    }
  });

  it("an unknown future version (31) is read through the columns it has, never guessing at others", async () => {
    const path = copyOfFixture(V30_SAMPLE_DB);
    // A later agent: a column of its own, a v11 column gone, version 31.
    const db = new Database(path);
    db.exec("UPDATE schema_version SET version = 31");
    db.exec("ALTER TABLE messages ADD COLUMN message_uid TEXT");
    db.exec("UPDATE messages SET message_uid = 'uid-' || id");
    db.exec("ALTER TABLE messages DROP COLUMN codex_message_items");
    db.close();
    const before = fileState(path);
    const store = await openSessionStore(path);
    try {
      expect(store.access.schemaVersion).toBe(31);
      const rows = await store.getMessages(DC);
      expect(rows).toHaveLength(91);
      // A column of the read model: read as it is. One the store does not know: not read.
      expect(rows[0]?.message_uid).toBe("uid-11");
      expect(rows[0]).not.toHaveProperty("display_identity");
      expect(rows[0]?.codex_message_items).toBeNull();
      expect((await store.getMessagesAsConversation(CLI007)).length).toBe(2);
      expect((await store.getSession(CLI001))?.system_prompt).toBe(SHARED_PROMPT);
      expect((await store.searchMessages("parse_config")).length).toBe(2);
      await expectEveryWriteRefused(store, 31);
      expect(await store.getMessages(DC)).toHaveLength(91);
    } finally {
      await store.close();
    }
    expect(fileState(path)).toEqual(before);
    const explicit = await openSessionStore({ path, readOnly: false }).catch((e: unknown) => e);
    expect((explicit as SchemaNewerError).fileVersion).toBe(31);
    expect(fileState(path)).toEqual(before);
  });

  it("a reference-layout file stamped with a far future version (47) is read, never written", async () => {
    const path = copyOfFixture(SAMPLE_DB);
    const db = new Database(path);
    db.exec("UPDATE schema_version SET version = 47");
    db.close();
    const before = fileState(path);
    const store = await openSessionStore(path);
    try {
      expect(store.readOnly).toBe(true);
      expect(store.readOnlyReason).toContain("schema version 47");
      expect(store.access).toMatchObject({ mode: "read-only", schemaVersion: 47, journalMode: "wal" });
      expect((await store.getMessages(TG)).map((m) => m.id)).toEqual([7, 8, 9, 10]);
      expect((await store.searchMessages("桂林")).map((h) => h.session_id)).toEqual([TG]);
      expect(await store.sessionCount()).toBe(13);
      await expectEveryWriteRefused(store, 47, TG);
      expect(await store.sessionCount()).toBe(13);
    } finally {
      await store.close();
    }
    expect(fileState(path)).toEqual(before);
  });
});
