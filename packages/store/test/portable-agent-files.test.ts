import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openSessionStore } from "@hermes/store";
import { describe, expect, it } from "vitest";
import { fileState } from "./helpers/file-state.js";
import { copyOfFixture, SAMPLE_DB, tempDir, V30_SAMPLE_DB, V31_SAMPLE_DB } from "./helpers/temp-dir.js";

// The portable format on the three fixtures: a lossless export of the agent's files, an import
// into our v11 file that says what it leaves out and never lists a hidden or archived session,
// a second import that adds nothing, and export → import → export byte-identical where the
// target holds everything (a v11 export into a v11 file; v30/v31 through PostgreSQL:
// tests/differential/test/portable-agent-files.test.ts).
const CRON = "20260106_000000_cron";
const ARCHIVED = "20260106_000000_homeassistant";
const HIDDEN = "20260106_000000_matrix";
const DC = "20260103_080000_dc0001";

interface Line {
  id?: string;
  schema_version?: number;
  exported_at?: number;
  messages?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

/** Exports a copy of `fixture` (read-only: the copy is checked unchanged) and returns the file. */
async function exportOf(
  fixture: string,
): Promise<{ file: string; report: { sessions: number; messages: number } }> {
  const path = copyOfFixture(fixture);
  const before = fileState(path);
  const store = await openSessionStore({ path, readOnly: true });
  const file = join(tempDir(), "export.jsonl");
  try {
    const report = await store.exportJsonl(file);
    return { file, report };
  } finally {
    await store.close();
    expect(fileState(path)).toEqual(before);
  }
}

const linesOf = (file: string) =>
  readFileSync(file, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);

/** The file's text with the header's `exported_at` taken out. */
const withoutTimestamp = (file: string) =>
  readFileSync(file, "utf8").replace(/"exported_at":[0-9.e+-]+,/, "");

describe("export of each fixture", () => {
  it.each([
    ["v11", SAMPLE_DB, 11, 13, 109],
    ["v30", V30_SAMPLE_DB, 30, 15, 117],
    ["v31", V31_SAMPLE_DB, 31, 15, 118],
  ])(
    "%s: the header names the file's schema version; every session and row is written",
    async (_n, fixture, version, sessions, messages) => {
      const { file, report } = await exportOf(fixture);
      expect(report).toMatchObject({ sessions, messages });
      const [header, ...rest] = linesOf(file);
      expect(header).toMatchObject({ format: "hermes-sessions", schema_version: version });
      expect(rest).toHaveLength(sessions);
      expect(rest.reduce((n, s) => n + (s.messages?.length ?? 0), 0)).toBe(messages);
      // One stable order: (timestamp, id), the order import compares in.
      for (const s of rest) {
        const keys = (s.messages ?? []).map((m) => [m.timestamp as number, m.id as number]);
        const sorted = [...keys].sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
        expect(keys).toEqual(sorted);
      }
    },
  );

  it("v31: flags, uids, view state, compaction and system prompts by content are in the export", async () => {
    const { file } = await exportOf(V31_SAMPLE_DB);
    const sessions = linesOf(file).slice(1);
    const byId = new Map(sessions.map((s) => [s.id, s]));
    expect(byId.get(CRON)).toMatchObject({
      archived: true,
      auto_archived: true,
      hidden: false,
      created_source: "cron",
    });
    expect(byId.get(HIDDEN)).toMatchObject({ hidden: true });
    expect(byId.get("20260101_090000_cli001")).toMatchObject({
      pinned: true,
      system_prompt: "You are Hermes.",
    });
    const dc = byId.get(DC)?.messages ?? [];
    const row = (id: number) => dc.find((m) => m.id === id);
    expect(row(99)).toMatchObject({
      message_uid: "5bf4fac7d4424dcba2b601075f10685d",
      view_state: "superseded",
    });
    expect(row(102)).toMatchObject({ message_uid: "5bf4fac7d4424dcba2b601075f10685d", view_state: "active" });
    expect(row(101)).toMatchObject({
      compressed_summary: true,
      message_uid: "3e591f29c7834237aa44810e56917b59",
    });
    expect(row(103)).toMatchObject({ tool_call_uid: "824d7574cc694a6e87df48fc52dc7d28" });
    expect(row(11)?.view_state).toBe("compacted");
    expect(byId.get("20260107_090000_cli007")?.rewind_count).toBe(1);
  });
});

describe("import into our v11 file", () => {
  it.each([
    ["v30", V30_SAMPLE_DB, [ARCHIVED], [HIDDEN]],
    ["v31", V31_SAMPLE_DB, [CRON, ARCHIVED].sort(), [HIDDEN]],
  ])(
    "%s: skips archived and hidden sessions, says what it leaves out, and a second import adds nothing",
    async (name, fixture, archived, hidden) => {
      const { file } = await exportOf(fixture);
      const target = join(tempDir(), "state.db");
      const store = await openSessionStore(target);
      try {
        const report = await store.importSessions(file);
        expect(
          report.skipped
            .filter((s) => s.reason === "archived")
            .map((s) => s.id)
            .sort(),
        ).toEqual(archived);
        expect(report.skipped.filter((s) => s.reason === "hidden").map((s) => s.id)).toEqual(hidden);
        expect(report.sessionsImported).toBe(15 - archived.length - hidden.length);
        expect(report.conflicts).toEqual([]);
        // dc0001's carried-tail originals 99/100 and cli007's rewound 116/117: a v11 file would show them.
        expect(report.leftOut["messages.superseded"]).toBe(4);
        expect(report.leftOut["sessions.pinned"]).toBe(2);
        expect(report.leftOut["messages.compressed_summary"]).toBe(1);
        expect(report.leftOut["messages.view_state"]).toBe(88);
        if (name === "v31") {
          // 32 results carry one; row 100 (superseded) is left out whole.
          expect(report.leftOut["messages.tool_call_uid"]).toBe(31);
          expect(report.leftOut["sessions.created_source"]).toBe(15 - archived.length - hidden.length);
        } else expect(report.leftOut).not.toHaveProperty("messages.message_uid");
        const listed = (await store.listSessionsRich({ limit: 100, includeChildren: true })).map((s) => s.id);
        for (const id of [...archived, ...hidden]) expect(listed).not.toContain(id);
        expect((await store.getMessages(DC)).map((m) => m.id)).not.toContain(99);
        expect(await store.getMessages(DC)).toHaveLength(91);

        const again = await store.importSessions(file);
        expect(again).toMatchObject({
          sessionsImported: 0,
          sessionsReplaced: 0,
          sessionsUnchanged: report.sessionsImported,
          conflicts: [],
        });
        expect(await store.sessionCount()).toBe(report.sessionsImported);
      } finally {
        await store.close();
      }
    },
  );

  it("imports archived and hidden sessions when asked", async () => {
    const { file } = await exportOf(V31_SAMPLE_DB);
    const store = await openSessionStore(join(tempDir(), "state.db"));
    try {
      const onlyArchived = await store.importSessions(file, { includeArchived: true });
      expect(onlyArchived.skipped).toEqual([expect.objectContaining({ id: HIDDEN, reason: "hidden" })]);
      expect(await store.getSession(CRON)).not.toBeNull();
      const all = await store.importSessions(file, { includeArchived: true, includeHidden: true });
      expect(all).toMatchObject({ sessionsImported: 1, skipped: [], conflicts: [] });
      expect(await store.sessionCount()).toBe(15);
    } finally {
      await store.close();
    }
  });

  it("v11: export → import into an empty file → export is byte-identical (header timestamp aside)", async () => {
    const { file } = await exportOf(SAMPLE_DB);
    const target = join(tempDir(), "state.db");
    const store = await openSessionStore(target);
    const second = join(tempDir(), "again.jsonl");
    try {
      const report = await store.importSessions(file);
      expect(report).toMatchObject({ sessionsImported: 13, messagesImported: 109, skipped: [], leftOut: {} });
      await store.exportJsonl(second);
      expect(await store.importSessions(second)).toMatchObject({ sessionsImported: 0, conflicts: [] });
    } finally {
      await store.close();
    }
    expect(withoutTimestamp(second)).toBe(withoutTimestamp(file));
  });
});
