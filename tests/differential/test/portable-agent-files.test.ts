import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { openPostgresSessionStore, type PostgresSessionStore } from "@hermes/postgres";
import { openSessionStore } from "@hermes/store";
import { describe, expect, inject, it, onTestFinished } from "vitest";
import { cliMain } from "./helpers/cli-main.js";

// A newer agent's file in PostgreSQL: `migrate-to-postgres --from` the v30 and v31 fixtures keeps
// archived and hidden sessions out of the listings (and the uids and flags), and PostgreSQL,
// which holds every field of the portable format, round-trips each fixture's export byte for
// byte (header timestamp aside), a second import adding nothing.
const url = inject("pgConnectionString");
if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);
const pgUrl = (schema: string) => `${url}${url.includes("?") ? "&" : "?"}schema=${schema}`;
const run = promisify(execFile);

const CLI = cliMain();
const cli = async (...args: string[]) => (await run(process.execPath, [CLI, ...args])).stdout;

const FIXTURES = new URL("../../../packages/store/test/fixtures/reference/", import.meta.url);
const fixture = (name: string) => new URL(name, FIXTURES).pathname;
const V11 = fixture("hermes-v11-sample.db");
const V30 = fixture("hermes-v30-sample.db");
const V31 = fixture("hermes-v31-sample.db");

const DC = "20260103_080000_dc0001";
const CRON = "20260106_000000_cron";
const ARCHIVED = "20260106_000000_homeassistant";
const HIDDEN = "20260106_000000_matrix";

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-agent-files-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A copy of a fixture (mode 0644) in a folder of its own. */
function copy(path: string): string {
  const file = join(tempDir(), "state.db");
  copyFileSync(path, file);
  chmodSync(file, 0o644);
  return file;
}

function state(path: string) {
  return {
    sha256: createHash("sha256").update(readFileSync(path)).digest("hex"),
    mode: (statSync(path).mode & 0o7777).toString(8),
    listing: readdirSync(dirname(path)).sort(),
  };
}

async function openPg(schema: string): Promise<PostgresSessionStore> {
  const store = await openPostgresSessionStore({ connectionString: url, schema });
  onTestFinished(() => store.close());
  return store;
}

const fresh = () => `a_${randomBytes(6).toString("hex")}`;
const withoutTimestamp = (file: string) =>
  readFileSync(file, "utf8").replace(/"exported_at":[0-9.e+-]+,/, "");

describe("a newer agent's file in PostgreSQL", { timeout: 180_000 }, () => {
  it.each([
    ["v30", V30, [ARCHIVED]],
    ["v31", V31, [ARCHIVED, CRON]],
  ])(
    "migrate-to-postgres --from the %s fixture keeps archived and hidden sessions hidden",
    async (name, source, archived) => {
      const file = copy(source);
      const before = state(file);
      const schema = fresh();
      const summary = JSON.parse(
        await cli("migrate-to-postgres", "--from", file, "--to", pgUrl(schema), "--json"),
      );
      expect(summary).toMatchObject({ sessions: 15, sessionsImported: 15, leftOut: {} });
      expect(summary.messagesImported).toBe(name === "v30" ? 117 : 118);
      expect(state(file)).toEqual(before);

      const pg = await openPg(schema);
      const listed = (await pg.listSessionsRich({ limit: 100, includeChildren: true })).map((s) => s.id);
      expect(listed).toHaveLength(15 - archived.length - 1);
      for (const id of [...archived, HIDDEN]) expect(listed).not.toContain(id);
      const withFlagged = (
        await pg.listSessionsRich({
          limit: 100,
          includeChildren: true,
          includeArchived: true,
          includeHidden: true,
        })
      ).map((s) => s.id);
      expect(withFlagged).toHaveLength(15);
      expect((await pg.searchSessions({ limit: 100 })).map((s) => s.id)).not.toContain(HIDDEN);
      expect((await pg.listSessionPage({ limit: 100 })).sessions.map((s) => s.id)).not.toContain(ARCHIVED);
      expect(await pg.getSession(HIDDEN)).toMatchObject({ hidden: true, archived: false });
      expect(await pg.getSession("20260101_090000_cli001")).toMatchObject({ pinned: true });

      const shown = await pg.getMessages(DC);
      expect(shown).toHaveLength(91);
      expect(shown.map((m) => m.id)).not.toContain(99);
      expect(shown.find((m) => m.id === 101)).toMatchObject({
        view_state: "active",
        compressed_summary: true,
      });
      expect((await pg.getMessagesAsConversation(DC)).length).toBe(3);
      // Search follows the listings: hidden and archived sessions only when asked, never a superseded row.
      const hitIds = async (q: string, o = {}) => (await pg.searchMessages(q, o)).map((h) => h.id);
      expect(await hitIds('"from matrix"')).toEqual([]);
      expect(await hitIds('"from matrix"', { includeHidden: true })).toEqual([110]);
      expect(await hitIds('"from homeassistant"')).toEqual([]);
      expect(await hitIds('"from homeassistant"', { includeArchived: true })).toEqual([111]);
      expect(await hitIds("deleted")).toEqual([]);
      expect(await hitIds('"29 matches"')).toEqual([103]);
      if (name === "v31") {
        expect(await pg.getSession(CRON)).toMatchObject({ archived: true, auto_archived: true });
        expect(shown.find((m) => m.id === 102)).toMatchObject({
          message_uid: "5bf4fac7d4424dcba2b601075f10685d",
          tool_call_uids: {
            c29a: "824d7574cc694a6e87df48fc52dc7d28",
            c29b: "daf93df5ab924d5eba22630b3d7ba11c",
          },
        });
        expect(shown.find((m) => m.id === 103)?.tool_call_uid).toBe("824d7574cc694a6e87df48fc52dc7d28");
        const nightly = await pg.searchMessages("nightly");
        expect(nightly.find((h) => h.id === 118)?.message_uid).toBe("a5d1c1238c6e9f385b5e8f4c7ee4216d");
      } else {
        expect(shown[0]).not.toHaveProperty("message_uid");
        expect((await pg.searchMessages('"29 matches"'))[0]).not.toHaveProperty("message_uid");
      }
    },
  );

  it.each([
    ["v11", V11, 11],
    ["v30", V30, 30],
    ["v31", V31, 31],
  ])(
    "%s: export → import into PostgreSQL → export is byte-identical; a second import adds nothing",
    async (_name, source, version) => {
      const file = copy(source);
      const before = state(file);
      const dir = tempDir();
      const first = join(dir, "first.jsonl");
      const sqlite = await openSessionStore({ path: file, readOnly: true });
      try {
        await sqlite.exportJsonl(first);
      } finally {
        await sqlite.close();
      }
      expect(state(file)).toEqual(before);

      const pg = await openPg(fresh());
      const report = await pg.importSessions(first);
      expect(report).toMatchObject({ conflicts: [], skipped: [], leftOut: {}, invalid: [] });
      const second = join(dir, "second.jsonl");
      await pg.exportJsonl(second);
      expect(JSON.parse(readFileSync(second, "utf8").split("\n")[0]!)).toMatchObject({
        schema_version: version,
      });
      expect(withoutTimestamp(second)).toBe(withoutTimestamp(first));
      const again = await pg.importSessions(first);
      expect(again).toMatchObject({
        sessionsImported: 0,
        messagesImported: 0,
        sessionsReplaced: 0,
        sessionsUnchanged: report.sessionsImported,
        conflicts: [],
      });
    },
  );
});
