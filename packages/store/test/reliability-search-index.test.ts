import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { cjkBuildSettled } from "./helpers/cjk-build-settled.js";
import { tempDir } from "./helpers/temp-dir.js";

// Issue 9, scenario 2: a damaged search index. The index is derived from `messages`, so a damaged
// one must never cost a message: writes go on (a write that meets the damage rebuilds the reference
// FTS tables from `messages` and runs again), `verifySearchIndex()` reports it, a rebuild restores
// search, and every read of sessions and messages keeps working meanwhile.

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
async function open(path: string): Promise<SessionStore> {
  const store = await openSessionStore({ path });
  opened.push(store);
  return store;
}

const MESSAGES = 300;

const baseDir = mkdtempSync(join(tmpdir(), "hermes-search-index-"));
afterAll(() => rmSync(baseDir, { recursive: true, force: true }));
let base: Promise<string> | undefined;

/** A copy of a store with two sessions of English and CJK messages and every index built. */
async function populated(): Promise<string> {
  base ??= build(join(baseDir, "state.db"));
  const path = join(tempDir(), "state.db");
  cpSync(await base, path);
  return path;
}

async function build(path: string): Promise<string> {
  const store = await openSessionStore({ path });
  for (const id of ["a", "b"]) await store.createSession({ id, source: "cli" });
  for (let i = 0; i < MESSAGES; i++) {
    await store.appendMessage({
      sessionId: i % 2 === 0 ? "a" : "b",
      role: i % 3 === 0 ? "assistant" : "user",
      content: `walrus message ${i} about deployments 部署日志 ${i}`,
      toolCalls: i % 7 === 0 ? [{ id: `c${i}`, function: { name: "terminal" } }] : undefined,
    });
  }
  expect(await store.searchMessages("部署", { limit: 1 })).toHaveLength(1); // builds the short-CJK index
  // 300 messages are more than a search indexes inline: the build runs on its thread.
  expect(await cjkBuildSettled(store)).toMatchObject({ state: "ready", lastError: null });
  await store.close();
  return path;
}

type Row = Record<string, unknown>;
function rawRows(path: string): { messages: Row[]; sessions: Row[] } {
  const db = new Database(path, { readonly: true });
  try {
    return {
      messages: db.prepare("SELECT * FROM messages ORDER BY id").all() as Row[],
      sessions: db.prepare("SELECT * FROM sessions ORDER BY id").all() as Row[],
    };
  } finally {
    db.close();
  }
}

/**
 * Damages one shadow table of an FTS5 index in place, with SQLite's defensive mode off (the only
 * way to write a shadow table): `_data` rows get random bytes past the structure and averages
 * records, `_idx` rows point at the wrong leaf pages. Returns how many rows were damaged.
 */
function damage(path: string, index: string, shadow: "data" | "idx"): number {
  const db = new Database(path);
  try {
    db.unsafeMode(true);
    const sql =
      shadow === "data"
        ? `UPDATE ${index}_data SET block = randomblob(length(block)) WHERE id > 10`
        : `UPDATE ${index}_idx SET pgno = pgno + 7`;
    return db.prepare(sql).run().changes;
  } finally {
    db.close();
  }
}

async function allHitIds(store: SessionStore, query: string): Promise<number[]> {
  const hits = await store.searchMessages(query, { limit: 1000 });
  return hits.map((h) => h.id).sort((x, y) => x - y);
}

function rawIntegrity(path: string): { integrity: string; fts: string[] } {
  const db = new Database(path);
  try {
    const integrity = String(db.pragma("integrity_check", { simple: true }));
    const fts: string[] = [];
    for (const t of ["messages_fts", "messages_fts_trigram"]) {
      try {
        db.prepare(`INSERT INTO ${t}(${t}, rank) VALUES ('integrity-check', 1)`).run();
        fts.push(`${t}: ok`);
      } catch (error) {
        fts.push(`${t}: ${(error as Error).message}`);
      }
    }
    return { integrity, fts };
  } finally {
    db.close();
  }
}

const CASES = [
  { index: "messages_fts", kind: "unicode61", shadow: "data" },
  { index: "messages_fts", kind: "unicode61", shadow: "idx" },
  { index: "messages_fts_trigram", kind: "trigram", shadow: "data" },
  { index: "messages_fts_trigram", kind: "trigram", shadow: "idx" },
  { index: "hermes_search_cjk", kind: "short-cjk", shadow: "data" },
  { index: "hermes_search_cjk", kind: "short-cjk", shadow: "idx" },
] as const;

describe("a damaged search index costs no message (issue 9, scenario 2)", () => {
  it.each(CASES)("$index: damaged _$shadow rows", async ({ index, shadow }) => {
    const path = await populated();
    const before = rawRows(path);
    expect(before.messages).toHaveLength(MESSAGES);
    expect(damage(path, index, shadow)).toBeGreaterThan(0);

    const store = await open(path);

    // Detected, before anything else touches the index.
    const report = await store.verifySearchIndex();
    expect(report.ok).toBe(false);
    const status = Object.fromEntries(report.indexes.map((i) => [i.name, i.status]));
    expect(status[index]).toBe("damaged");
    for (const other of CASES.map((c) => c.index).filter((n) => n !== index)) {
      expect(status[other]).toBe("ok");
    }

    // Reads of sessions and messages do not touch the index and keep working.
    expect(await store.getMessages("a")).toHaveLength(MESSAGES / 2);
    expect(await store.messageCount()).toBe(MESSAGES);
    expect((await store.getSession("b"))?.message_count).toBe(MESSAGES / 2);
    expect((await store.listSessionsRich()).map((s) => s.id).sort()).toEqual(["a", "b"]);
    expect((await store.exportSession("a"))?.messages).toHaveLength(MESSAGES / 2);

    // Writes succeed: one message, a batch, a clear (its delete triggers read the index).
    const one = await store.appendMessage({
      sessionId: "a",
      role: "user",
      content: "walrus after 部署 damage",
    });
    const two = await store.appendMessages([
      { sessionId: "b", role: "user", content: "walrus batch one 部署" },
      { sessionId: "b", role: "assistant", content: "walrus batch two" },
    ]);
    await store.createSession({ id: "scratch", source: "cli" });
    await store.appendMessage({ sessionId: "scratch", role: "user", content: "walrus to be cleared" });
    await store.clearMessages("scratch");
    expect(await store.messageCount()).toBe(MESSAGES + 3);

    // Nothing already stored was lost or changed.
    const after = rawRows(path);
    const kept = after.messages.filter((m) => (m.id as number) <= (before.messages.at(-1)?.id as number));
    expect(kept).toEqual(before.messages);
    expect(after.messages.map((m) => m.id)).toEqual([...before.messages.map((m) => m.id), one, ...two]);

    // A rebuild restores every index and every search.
    await store.rebuildSearchIndex();
    const healed = await store.verifySearchIndex();
    expect(healed.ok).toBe(true);
    expect(healed.indexes.every((i) => i.status === "ok")).toBe(true);
    const allIds = after.messages.map((m) => m.id as number).sort((x, y) => x - y);
    const walrus = allIds.filter((_, i) => String(after.messages[i]?.content).includes("walrus"));
    expect(await allHitIds(store, "walrus")).toEqual(walrus);
    expect(await allHitIds(store, "deployments")).toEqual(allIds.slice(0, MESSAGES));
    const cjk = after.messages.filter((m) => String(m.content).includes("部署")).map((m) => m.id);
    expect(await allHitIds(store, "部署")).toEqual(cjk); // short-CJK index (two characters)
    expect(await allHitIds(store, "部署 日志")).toEqual(allIds.slice(0, MESSAGES));
    expect(await allHitIds(store, "署日志")).toEqual(allIds.slice(0, MESSAGES)); // trigram
    await store.close();

    const check = rawIntegrity(path);
    expect(check.integrity).toBe("ok");
    expect(check.fts).toEqual(["messages_fts: ok", "messages_fts_trigram: ok"]);
  });

  it("searching a damaged index is a typed STORE_CORRUPT, never a wrong answer, until rebuilt", async () => {
    const path = await populated();
    damage(path, "messages_fts", "data");
    damage(path, "hermes_search_cjk", "data");
    const store = await open(path);
    await expect(store.searchMessages("walrus")).rejects.toMatchObject({ code: "STORE_CORRUPT" });
    await expect(store.searchMessages("部署")).rejects.toMatchObject({ code: "STORE_CORRUPT" });
    // A search index fault is not a damaged file: writes still go on.
    await store.appendMessage({ sessionId: "a", role: "user", content: "still writable" });
    await store.rebuildSearchIndex();
    expect(await allHitIds(store, "walrus")).toHaveLength(MESSAGES);
    expect(await allHitIds(store, "部署")).toHaveLength(MESSAGES);
  });

  it("writes that meet a damaged reference index rebuild it from `messages` and succeed", async () => {
    const path = await populated();
    damage(path, "messages_fts", "data");
    damage(path, "messages_fts_trigram", "data");
    const store = await open(path);
    // FTS5 merges old segments as new ones are written: within a few writes one reads the
    // damaged segments (at the trigger or at COMMIT). That write rebuilds both reference tables
    // from `messages` in its own transaction and runs again; no manual rebuild is needed.
    for (let i = 0; i < 10; i++) {
      await store.appendMessage({ sessionId: "a", role: "user", content: `walrus repaired ${i}` });
    }
    const report = await store.verifySearchIndex();
    expect(report.indexes.filter((i) => i.name.startsWith("messages_fts")).map((i) => i.status)).toEqual([
      "ok",
      "ok",
    ]);
    expect(await allHitIds(store, "walrus")).toHaveLength(MESSAGES + 10);
    expect(await allHitIds(store, "署日志")).toHaveLength(MESSAGES); // trigram (three CJK characters)
  });
});
