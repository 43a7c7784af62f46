import { join } from "node:path";
import type { MigrationProgress } from "@hermes/schema";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { columnsByName, fingerprint, ftsMatch, rowsOf, withFile } from "./fixtures/file-inspection.js";
import {
  buildLegacyFile,
  type LegacyKind,
  TOOL_ONLY_TOKENS,
  V1_MESSAGE_COLUMNS,
  V1_SESSION_COLUMNS,
} from "./fixtures/legacy-files.js";
import { referenceSchema, type SchemaObject, schemaOf } from "./helpers/reference-schema.js";
import { tempDir } from "./helpers/temp-dir.js";

/** A scratch database holding the reference's v11 objects, to read their columns. */
function referenceDatabase(): Database.Database {
  const db = new Database(":memory:");
  for (const o of referenceSchema())
    if (o.type === "table" && !o.name.includes("_fts") && !o.name.startsWith("sqlite_")) db.exec(o.sql);
  return db;
}

/**
 * What SQLite stores for a table that `ALTER TABLE … ADD COLUMN` grew: the old text with
 * `, "<name>" <TYPE>[ DEFAULT <d>]` for each added column inserted where SQLite's parser saw the
 * column list end: at the comma that opens the table constraints (`FOREIGN KEY …`), or else at
 * the closing parenthesis. The added columns must be exactly the v11 columns the old table
 * lacked, in v11 order, with the reference's quoting.
 */
function alteredTableSql(oldSql: string, table: string, had: readonly string[]): string {
  const ref = referenceDatabase();
  const v11 = ref
    .prepare('SELECT name, type, "notnull", dflt_value FROM pragma_table_info(?)')
    .all(table) as { name: string; type: string; notnull: number; dflt_value: string | null }[];
  ref.close();
  const added = v11
    .filter((c) => !had.includes(c.name))
    .map((c) => `"${c.name}" ${c.type}${c.dflt_value === null ? "" : ` DEFAULT ${c.dflt_value}`}`);
  if (added.length === 0) return oldSql;
  const constraints = /,\s*FOREIGN KEY/.exec(oldSql);
  const at = constraints?.index ?? oldSql.lastIndexOf(")");
  return `${oldSql.slice(0, at)}, ${added.join(", ")}${oldSql.slice(at)}`;
}

const byKey = (o: SchemaObject) => `${o.type} ${o.name}`;

interface Case {
  kind: LegacyKind;
  version: number;
  /** Version steps this file needs, in order. */
  steps: string[];
}

const CASES: Case[] = [
  { kind: "v1", version: 1, steps: ["v10-trigram", "v11-fts-reindex"] },
  { kind: "v2", version: 2, steps: ["v10-trigram", "v11-fts-reindex"] },
  { kind: "v7-gap", version: 7, steps: ["v10-trigram", "v11-fts-reindex"] },
  { kind: "v10", version: 10, steps: ["v11-fts-reindex"] },
];

describe.each(CASES)("upgrading a $kind file to v11", ({ kind, version, steps }) => {
  it("keeps every row, ends with exactly the v11 objects, and indexes tool calls and tool names", async () => {
    const path = join(tempDir(), "state.db");
    const built = buildLegacyFile(path, kind);
    const before = schemaOf(path);
    const oldRows = withFile(path, (db) => ({
      sessions: rowsOf(db, "sessions", V1_SESSION_COLUMNS),
      messages: rowsOf(db, "messages", V1_MESSAGE_COLUMNS),
      sessionColumns: db.prepare("SELECT name FROM pragma_table_info('sessions')").pluck().all() as string[],
      messageColumns: db.prepare("SELECT name FROM pragma_table_info('messages')").pluck().all() as string[],
      // The old single-column index cannot see tool-call JSON or tool names: the reason for v11.
      toolHits: ftsMatch(db, "messages_fts", TOOL_ONLY_TOKENS.inToolCalls),
    }));
    expect(oldRows.toolHits).toEqual([]);

    const store = await openSessionStore({ path });
    const report = store.migration;
    await store.close();
    expect(report.fromVersion).toBe(version);
    expect(report.toVersion).toBe(11);
    expect(report.newerVersion).toBe(false);
    expect(report.warnings).toEqual([]);
    expect(report.applied.filter((s) => s.startsWith("v"))).toEqual(steps);

    const after = schemaOf(path);
    const reference = referenceSchema();
    expect(after.map(byKey)).toEqual(reference.map(byKey));
    const oldSql = new Map(before.map((o) => [byKey(o), o.sql]));
    for (const [i, object] of after.entries()) {
      const expected = reference[i] as SchemaObject;
      const grown =
        object.type === "table" && (object.name === "sessions" || object.name === "messages")
          ? oldSql.get(byKey(object))
          : undefined;
      if (grown === undefined) {
        // Created by the upgrade (or untouched since the v11 DDL): the reference's text exactly.
        expect(object.sql, object.name).toBe(expected.sql);
      } else {
        const had = object.name === "sessions" ? oldRows.sessionColumns : oldRows.messageColumns;
        expect(object.sql, object.name).toBe(alteredTableSql(grown, object.name, had));
      }
    }

    withFile(path, (db) => {
      const ref = referenceDatabase();
      for (const table of ["sessions", "messages", "state_meta", "schema_version"]) {
        // Same columns as a fresh file (name, type, NOT NULL, default, key), whatever their order.
        expect(columnsByName(db, table), table).toEqual(columnsByName(ref, table));
        expect(db.pragma(`foreign_key_list(${table})`), table).toEqual(
          ref.pragma(`foreign_key_list(${table})`),
        );
      }
      ref.close();
      expect(db.prepare("SELECT version FROM schema_version").all()).toEqual([{ version: 11 }]);
      expect(rowsOf(db, "sessions", V1_SESSION_COLUMNS)).toEqual(oldRows.sessions);
      expect(rowsOf(db, "messages", V1_MESSAGE_COLUMNS)).toEqual(oldRows.messages);
      expect(db.prepare("SELECT COUNT(*) FROM sessions").pluck().get()).toBe(built.sessions);
      expect(db.prepare("SELECT COUNT(*) FROM messages").pluck().get()).toBe(built.messages);
      if (kind === "v1" || kind === "v2") {
        // Columns added by reconciliation read as their defaults on old rows.
        expect(
          db
            .prepare("SELECT DISTINCT title, api_call_count, cache_read_tokens, billing_mode FROM sessions")
            .all(),
        ).toEqual([{ title: null, api_call_count: 0, cache_read_tokens: 0, billing_mode: null }]);
      }
      if (kind === "v7-gap") {
        expect(
          db
            .prepare("SELECT title, api_call_count, cache_read_tokens FROM sessions WHERE id = 's-root'")
            .get(),
        ).toEqual({ title: "Docker build", api_call_count: 3, cache_read_tokens: 100 });
        expect(db.prepare("SELECT COUNT(reasoning_content) FROM messages").pluck().get()).toBe(0);
      }

      const idOf = (sql: string) => db.prepare(sql).pluck().get() as number;
      const toolCallMessage = idOf("SELECT id FROM messages WHERE tool_calls LIKE '%zanzibarctl%'");
      const toolNameMessage = idOf("SELECT id FROM messages WHERE tool_name = 'quuxgrep'");
      for (const table of ["messages_fts", "messages_fts_trigram"]) {
        expect(ftsMatch(db, table, TOOL_ONLY_TOKENS.inToolCalls), table).toEqual([toolCallMessage]);
        expect(ftsMatch(db, table, TOOL_ONLY_TOKENS.inToolName), table).toEqual([toolNameMessage]);
        expect(ftsMatch(db, table, "tool_calls:zanzibarctl"), table).toEqual([toolCallMessage]);
        // Every message is indexed (NULL content included), and the index agrees with `messages`.
        expect(db.prepare(`SELECT COUNT(*) FROM ${table}_docsize`).pluck().get(), table).toBe(built.messages);
      }
      expect(ftsMatch(db, "messages_fts", "docker")).toEqual([1]);
      expect(ftsMatch(db, "messages_fts_trigram", '"桂林山"')).toEqual([6]);
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(db.pragma("foreign_key_check")).toEqual([]);
    });
    withFile(
      path,
      (db) => {
        for (const table of ["messages_fts", "messages_fts_trigram"]) {
          // FTS5 compares its index with the content table row by row.
          expect(() =>
            db.prepare(`INSERT INTO ${table}(${table}) VALUES('integrity-check')`).run(),
          ).not.toThrow();
        }
      },
      true,
    );
  });

  it("the upgraded file keeps working: the triggers index new messages; a second open changes nothing", async () => {
    const path = join(tempDir(), "state.db");
    buildLegacyFile(path, kind);
    const store = await openSessionStore({ path });
    const id = await store.appendMessage({
      sessionId: "s-child",
      role: "assistant",
      content: null,
      toolName: "terminal",
      toolCalls: [{ id: "c9", function: { name: "frobnicatectl" } }],
    });
    await store.close();
    withFile(path, (db) => {
      expect(ftsMatch(db, "messages_fts", "frobnicatectl")).toEqual([id]);
      expect(ftsMatch(db, "messages_fts_trigram", "frobnicatectl")).toEqual([id]);
    });

    const settled = fingerprint(path);
    const again = await openSessionStore({ path });
    expect(again.migration).toEqual({
      fromVersion: 11,
      toVersion: 11,
      applied: [],
      warnings: [],
      newerVersion: false,
    });
    await again.close();
    expect(fingerprint(path)).toBe(settled);
  });
});

describe("files the chain must not change", () => {
  it("a file recording a version above 11 is opened untouched", async () => {
    const path = join(tempDir(), "state.db");
    buildLegacyFile(path, "v12");
    const before = fingerprint(path);
    const store = await openSessionStore({ path });
    expect(store.migration).toEqual({
      fromVersion: 12,
      toVersion: 12,
      applied: [],
      warnings: [],
      newerVersion: true,
    });
    await store.close();
    // No trigram table, no unique-index repair, no version change: not a single byte of
    // schema or data differs.
    expect(fingerprint(path)).toBe(before);
    withFile(path, (db) => {
      expect(db.prepare("SELECT version FROM schema_version").pluck().get()).toBe(12);
      expect(
        db.prepare("SELECT name FROM sqlite_master WHERE name = 'messages_fts_trigram'").get(),
      ).toBeUndefined();
    });
  });

  it("a file with duplicate titles opens, keeps them, reports them, and is otherwise upgraded", async () => {
    const path = join(tempDir(), "state.db");
    buildLegacyFile(path, "v3-duplicate-titles");
    const store = await openSessionStore({ path });
    const report = store.migration;
    expect(report.toVersion).toBe(11);
    expect(report.applied).not.toContain("title-unique-index");
    expect(report.warnings).toHaveLength(1);
    expect(report.warnings[0]).toContain("'Docker build' (2)");
    expect(await store.messageCount()).toBe(9);
    await store.close();
    withFile(path, (db) => {
      expect(db.prepare("SELECT id, title FROM sessions WHERE title IS NOT NULL ORDER BY id").all()).toEqual([
        { id: "s-child", title: "Trip" },
        { id: "s-root", title: "Docker build" },
        { id: "s-telegram", title: "Docker build" },
      ]);
      expect(
        db.prepare("SELECT name FROM sqlite_master WHERE name = 'idx_sessions_title_unique'").get(),
      ).toBe(undefined);
      expect(ftsMatch(db, "messages_fts", TOOL_ONLY_TOKENS.inToolName)).toHaveLength(1);
    });

    // Every later open reports the duplicates again (until someone renames them) and changes nothing.
    const settled = fingerprint(path);
    const again = await openSessionStore({ path });
    expect(again.migration.applied).toEqual([]);
    expect(again.migration.warnings).toEqual(report.warnings);
    await again.close();
    expect(fingerprint(path)).toBe(settled);

    // Once the duplicate is renamed (outside the unique index, nothing stops it), the next open
    // creates the index.
    const db = new Database(path);
    db.exec("UPDATE sessions SET title = 'Docker build #2' WHERE id = 's-telegram'");
    db.close();
    const fixed = await openSessionStore({ path });
    expect(fixed.migration.applied).toEqual(["title-unique-index"]);
    expect(fixed.migration.warnings).toEqual([]);
    await fixed.close();
    expect(schemaOf(path).map(byKey)).toEqual(referenceSchema().map(byKey));
  });
});

describe("progress of a long upgrade", () => {
  it("reports done/total for each backfill, monotonically, ending at the number of messages", async () => {
    const path = join(tempDir(), "state.db");
    const built = buildLegacyFile(path, "v10", { bulkMessages: 120_000 });
    const events: MigrationProgress[] = [];
    const store = await openSessionStore({ path, onMigrationProgress: (p) => events.push({ ...p }) });
    expect(store.migration.applied).toContain("v11-fts-reindex");
    expect(await store.messageCount()).toBe(built.messages);
    await store.close();

    const steps = [...new Set(events.map((e) => e.step))];
    expect(steps).toEqual(["v11-fts-reindex", "v11-fts-reindex-trigram"]);
    for (const step of steps) {
      const mine = events.filter((e) => e.step === step);
      expect(mine.every((e) => e.total === built.messages)).toBe(true);
      expect(mine[0]?.done).toBe(0);
      expect(mine.at(-1)?.done).toBe(built.messages);
      // Several reports in between: a caller can draw a progress bar.
      expect(mine.length).toBeGreaterThan(2);
      for (let i = 1; i < mine.length; i++) {
        expect((mine[i] as MigrationProgress).done).toBeGreaterThan((mine[i - 1] as MigrationProgress).done);
      }
    }
    withFile(path, (db) => {
      expect(ftsMatch(db, "messages_fts", "bulkctl7")).toHaveLength(
        db
          .prepare("SELECT COUNT(*) FROM messages WHERE tool_calls LIKE '%bulkctl7\"%'")
          .pluck()
          .get() as number,
      );
    });
  });

  it("an older file reports the v10 trigram backfill (content rows only) before the v11 ones", async () => {
    const path = join(tempDir(), "state.db");
    buildLegacyFile(path, "v2");
    const events: MigrationProgress[] = [];
    const store = await openSessionStore({ path, onMigrationProgress: (p) => events.push({ ...p }) });
    await store.close();
    const finals = events.filter((e) => e.done === e.total && e.done > 0).map((e) => [e.step, e.total]);
    // Nine messages, one of them with NULL content (the v10 step indexed content only).
    expect(finals).toEqual([
      ["v10-trigram", 8],
      ["v11-fts-reindex", 9],
      ["v11-fts-reindex-trigram", 9],
    ]);
  });
});
