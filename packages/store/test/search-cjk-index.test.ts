import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { cjkBuildSettled } from "./helpers/cjk-build-settled.js";
import { searchHitIds as ids } from "./helpers/search-hit-ids.js";
import { copyOfSample, tempDir } from "./helpers/temp-dir.js";

// The short-CJK index (ours) must stay exact while other writers — the reference, which knows
// nothing of it — change `messages`; and after our own updates, deletes, clears and prunes.

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
async function open(path = join(tempDir(), "state.db"), clock?: () => number): Promise<SessionStore> {
  const store = await openSessionStore({ path, ...(clock ? { clock } : {}) });
  opened.push(store);
  return store;
}

/** The reference's own statements, run in a child process with plain better-sqlite3. */
const REFERENCE_WRITER = `
import Database from "better-sqlite3";
const db = new Database(process.argv[1], { timeout: 1000 });
db.pragma("journal_mode = WAL");
db.pragma("foreign_keys = ON");
const ops = JSON.parse(process.argv[2]);
const now = () => Date.now() / 1000;
for (const op of ops) {
  db.exec("BEGIN IMMEDIATE");
  if (op.kind === "session") {
    db.prepare("INSERT OR IGNORE INTO sessions (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)").run(op.id, "telegram", null, null, null, null, null, now());
  } else if (op.kind === "append") {
    const r = db.prepare("INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").run(op.session, "user", op.content, null, op.toolCalls ?? null, op.toolName ?? null, now(), null, null, null, null, null, null, null);
    db.prepare("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?").run(op.session);
    console.log(String(r.lastInsertRowid));
  } else if (op.kind === "update") {
    db.prepare("UPDATE messages SET content = ? WHERE id = ?").run(op.content, op.id);
  } else if (op.kind === "clear") {
    db.prepare("DELETE FROM messages WHERE session_id = ?").run(op.session);
    db.prepare("UPDATE sessions SET message_count = 0, tool_call_count = 0 WHERE id = ?").run(op.session);
  } else if (op.kind === "delete-session") {
    db.prepare("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?").run(op.session);
    db.prepare("DELETE FROM messages WHERE session_id = ?").run(op.session);
    db.prepare("DELETE FROM sessions WHERE id = ?").run(op.session);
  }
  db.exec("COMMIT");
}
db.close();
`;

type ReferenceOp =
  | { kind: "session"; id: string }
  | { kind: "append"; session: string; content: string | null; toolCalls?: string; toolName?: string }
  | { kind: "update"; id: number; content: string | null }
  | { kind: "clear"; session: string }
  | { kind: "delete-session"; session: string };

/** Runs `ops` in a separate Node process, as the reference would; returns appended ids. */
function referenceProcess(path: string, ops: ReferenceOp[]): number[] {
  const r = spawnSync(
    process.execPath,
    ["--input-type=module", "-e", REFERENCE_WRITER, path, JSON.stringify(ops)],
    {
      cwd: join(import.meta.dirname, ".."),
      encoding: "utf8",
    },
  );
  if (r.status !== 0) throw new Error(`reference writer failed: ${r.stderr}`);
  return r.stdout.split("\n").filter(Boolean).map(Number);
}

describe("short-CJK index: other writers", () => {
  it("catches up with messages another process inserted, changed and deleted with the reference's SQL", async () => {
    const path = copyOfSample();
    const store = await open(path);
    expect(await ids(store, "测试")).toEqual([8]); // builds the index
    const [a, b, c] = referenceProcess(path, [
      { kind: "session", id: "ref-1" },
      { kind: "append", session: "ref-1", content: "新的测试用例" },
      { kind: "append", session: "ref-1", content: "没有那个词" },
      {
        kind: "append",
        session: "ref-1",
        content: null,
        toolCalls: '[{"arguments": "测试 tool"}]',
        toolName: "工具",
      },
    ]);
    expect(await ids(store, "测试")).toEqual([8, a, c]);
    expect(await ids(store, "工具")).toEqual([c]);
    expect(await ids(store, "工")).toEqual([c]);
    referenceProcess(path, [
      { kind: "update", id: a as number, content: "改了" },
      { kind: "update", id: b as number, content: "现在有测试了" },
      { kind: "update", id: 8, content: null },
    ]);
    expect(await ids(store, "测试")).toEqual([b, c]);
    expect(await ids(store, "改了")).toEqual([a]);
    expect(await ids(store, "桂林")).toEqual([]);
    referenceProcess(path, [{ kind: "clear", session: "ref-1" }]);
    expect(await ids(store, "测试")).toEqual([]);
    expect((await store.verifySearchIndex()).ok).toBe(true);
  });

  it("catches up after a raw second connection writes while the store is closed, and the queue empties", async () => {
    const path = join(tempDir(), "state.db");
    let store = await open(path);
    await store.createSession({ id: "s", source: "cli" });
    await store.appendMessage({ sessionId: "s", role: "user", content: "第一条消息" });
    expect(await ids(store, "消息")).toHaveLength(1);
    await store.close();
    const raw = new Database(path);
    const add = raw.prepare(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', ?, ?)",
    );
    for (let i = 0; i < 5000; i++) add.run(i % 2 ? `第${i}条消息` : `plain ${i}`, 1_800_000_000 + i);
    raw.prepare("DELETE FROM messages WHERE id = 1").run();
    expect(raw.prepare("SELECT COUNT(*) AS n FROM hermes_search_queue").get()).toEqual({ n: 5001 });
    raw.close();
    store = await open(path);
    expect(await ids(store, "消息")).toHaveLength(2500);
    expect((await store.searchMessages("消息", { limit: 1 }))[0]?.snippet).toBe("第4999条消息");
    // A backlog this large is applied on the builder's thread while searches scan.
    expect(await cjkBuildSettled(store)).toMatchObject({ state: "ready", lastError: null });
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT COUNT(*) AS n FROM hermes_search_queue").get()).toEqual({ n: 0 });
    check.close();
  });

  it("a message written by the reference while the index builds is found", async () => {
    const path = join(tempDir(), "state.db");
    const store = await open(path);
    await store.createSession({ id: "s", source: "cli" });
    for (let i = 0; i < 30; i++)
      await store.appendMessage({ sessionId: "s", role: "user", content: `旧消息${i}` });
    const building = store.searchMessages("消息", { limit: 1000 });
    const [late] = referenceProcess(path, [
      { kind: "session", id: "ref" },
      { kind: "append", session: "ref", content: "新消息" },
    ]);
    expect((await building).length).toBeGreaterThanOrEqual(30);
    expect(await ids(store, "消息")).toContain(late);
    expect(await ids(store, "消息")).toHaveLength(31);
  });

  it("the reference can keep writing a file that has our index (plain-SQL triggers only)", async () => {
    const path = copyOfSample();
    const store = await open(path);
    await store.searchMessages("测");
    await store.close();
    const appended = referenceProcess(path, [
      { kind: "session", id: "r" },
      ...Array.from({ length: 20 }, (_, i) => ({
        kind: "append" as const,
        session: "r",
        content: `第${i}条`,
      })),
      { kind: "delete-session", session: "r" },
    ]);
    expect(appended).toHaveLength(20);
  });
});

describe("short-CJK index: newest first", () => {
  it("pages in timestamp order while timestamps follow ids, and still once one does not", async () => {
    const path = join(tempDir(), "state.db");
    let now = 1_750_000_000;
    const store = await open(path, () => (now += 1));
    // createSession reads the clock once (…001), each append once (…002 + i).
    await store.createSession({ id: "s", source: "cli" });
    const ours: number[] = [];
    for (let i = 0; i < 30; i++)
      ours.push(await store.appendMessage({ sessionId: "s", role: "user", content: `第${i}次测试` }));
    const page = async (offset: number) =>
      (await store.searchMessages("测试", { limit: 5, offset })).map((h) => h.id);
    expect(await page(0)).toEqual(ours.slice(-5).reverse());
    expect(await page(5)).toEqual(ours.slice(-10, -5).reverse());
    // Another process writes a message stamped in the past (an import, a clock stepped back).
    const raw = new Database(path);
    const old = Number(
      raw
        .prepare(
          "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', '旧的测试', ?)",
        )
        .run(1_750_000_010.5).lastInsertRowid,
    );
    raw.close();
    const all = (await store.searchMessages("测试", { limit: 100 })).map((h) => h.id);
    // Ordered by timestamp: ours are stamped …002 + i, so the old message
    // (…010.5) sits between ours[9] (…011) and ours[8] (…010).
    const expected = [...ours.slice(9).reverse(), old, ...ours.slice(0, 9).reverse()];
    expect(all).toEqual(expected);
    expect(await page(20)).toEqual(expected.slice(20, 25));
  });
});

describe("short-CJK index: when it cannot be brought up to date", () => {
  it("answers with the reference's scan while another connection holds the write lock past the deadline", async () => {
    const path = join(tempDir(), "state.db");
    // Distinct timestamps: three appends can land in one millisecond, and on a tie the
    // reference's scan orders by id ascending, which would put "测试一" first.
    let now = 1_700_000_000;
    const store = await openSessionStore({ path, writeDeadlineMs: 150, clock: () => (now += 0.001) });
    opened.push(store);
    await store.createSession({ id: "s", source: "cli" });
    const a = await store.appendMessage({ sessionId: "s", role: "user", content: "测试一" });
    await store.appendMessage({ sessionId: "s", role: "user", content: "别的" });
    const c = await store.appendMessage({ sessionId: "s", role: "user", content: "再测试" });
    const blocker = new Database(path);
    blocker.exec("BEGIN IMMEDIATE");
    try {
      expect(await ids(store, "测试")).toEqual([a, c]);
      expect(await ids(store, "测试 OR 别")).toEqual([1, 2, 3]);
      expect((await store.searchMessages("测试"))[0]?.snippet).toBe("再测试");
    } finally {
      blocker.exec("ROLLBACK");
      blocker.close();
    }
    // Nothing of the index was created; the next query builds it.
    expect((await store.verifySearchIndex()).indexes[2]?.status).toBe("not-built");
    expect(await ids(store, "测试")).toEqual([a, c]);
    expect((await store.verifySearchIndex()).indexes[2]?.status).toBe("ok");
  });
});

describe("short-CJK index: our own writes", () => {
  it("stays exact after clearMessages, deleteSession and pruneSessions", async () => {
    let now = 1_700_000_000;
    const store = await open(undefined, () => (now += 0.001));
    for (const id of ["a", "b", "c"]) await store.createSession({ id, source: "cli" });
    await store.appendMessage({ sessionId: "a", role: "user", content: "a 会话的测试" });
    await store.appendMessage({ sessionId: "b", role: "user", content: "b 会话的测试" });
    await store.appendMessage({ sessionId: "c", role: "user", content: "c 会话的测试" });
    await store.appendMessage({
      sessionId: "c",
      role: "assistant",
      content: null,
      toolCalls: [{ name: "测试工具" }],
    });
    expect(await ids(store, "测试")).toEqual([1, 2, 3, 4]);
    await store.clearMessages("a");
    expect(await ids(store, "测试")).toEqual([2, 3, 4]);
    await store.deleteSession("b");
    expect(await ids(store, "测试")).toEqual([3, 4]);
    await store.endSession("c", "done");
    now += 200 * 86400;
    expect(await store.pruneSessions({ olderThanDays: 90 })).toBe(1);
    expect(await ids(store, "测试")).toEqual([]);
    await store.appendMessage({ sessionId: "a", role: "user", content: "又一个测试" });
    expect(await ids(store, "测试")).toEqual([5]);
    expect(await store.verifySearchIndex()).toMatchObject({ ok: true });
  });
});

describe("verifySearchIndex / rebuildSearchIndex", () => {
  it("reports every index; a fresh file has no short-CJK index yet", async () => {
    const store = await open();
    const report = await store.verifySearchIndex();
    expect(report).toEqual({
      ok: true,
      indexes: [
        { name: "messages_fts", kind: "unicode61", status: "ok" },
        { name: "messages_fts_trigram", kind: "trigram", status: "ok" },
        { name: "hermes_search_cjk", kind: "short-cjk", status: "not-built" },
      ],
    });
  });

  it("detects a reference index out of step with messages, a missing trigger, a damaged short-CJK index; rebuild repairs all", async () => {
    const path = copyOfSample();
    const store = await open(path);
    await store.searchMessages("测试");
    const raw = new Database(path);
    // Rows written behind the triggers' backs: the FTS index no longer matches `messages`.
    raw.exec("DROP TRIGGER messages_fts_trigram_insert");
    raw.exec(
      "INSERT INTO messages_fts(messages_fts, rowid, content, tool_calls, tool_name) SELECT 'delete', id, content, tool_calls, tool_name FROM messages WHERE id = 1",
    );
    raw.exec("DELETE FROM hermes_search_cjk WHERE rowid = 8");
    raw.close();
    const report = await store.verifySearchIndex();
    expect(report.ok).toBe(false);
    expect(report.indexes.map((i) => [i.name, i.status])).toEqual([
      ["messages_fts", "damaged"],
      ["messages_fts_trigram", "missing"],
      ["hermes_search_cjk", "damaged"],
    ]);
    expect(await ids(store, "docker")).toEqual([2]); // message 1 lost from the index
    expect(await ids(store, "测试")).toEqual([]);
    const progress: Array<{ index: string; done: number; total: number }> = [];
    await store.rebuildSearchIndex({ onProgress: (p) => progress.push(p) });
    expect((await store.verifySearchIndex()).ok).toBe(true);
    expect(await ids(store, "docker")).toEqual([1, 2]);
    expect(await ids(store, "测试")).toEqual([8]);
    expect(progress.at(-1)).toEqual({ index: "hermes_search_cjk", done: 109, total: 109 });
    expect(new Set(progress.map((p) => p.index))).toEqual(
      new Set(["messages_fts", "messages_fts_trigram", "hermes_search_cjk"]),
    );
  });

  it("reports a short-CJK index that is behind (queued changes) as ok, and catches up on use", async () => {
    const path = copyOfSample();
    const store = await open(path);
    await store.searchMessages("测试");
    referenceProcess(path, [
      { kind: "session", id: "r" },
      { kind: "append", session: "r", content: "更多的测试" },
    ]);
    const report = await store.verifySearchIndex();
    expect(report.ok).toBe(true);
    expect(report.indexes[2]).toEqual({
      name: "hermes_search_cjk",
      kind: "short-cjk",
      status: "behind",
      pending: 1,
    });
    expect(await ids(store, "测试")).toHaveLength(2);
    expect((await store.verifySearchIndex()).indexes[2]?.status).toBe("ok");
  });

  it("rebuildSearchIndex rejects a non-function onProgress", async () => {
    const store = await open();
    await expect(store.rebuildSearchIndex({ onProgress: 1 as never })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });
});

describe("short-CJK index: timestamp blocks (newest first without sorting every match)", () => {
  /** The reference's LIKE query, ids in its order. */
  function referenceOrder(path: string, term: string, limit = 100): number[] {
    const db = new Database(path, { readonly: true });
    const ids = db
      .prepare(
        "SELECT m.id FROM messages m JOIN sessions s ON s.id = m.session_id WHERE (m.content LIKE ? ESCAPE '\\' OR m.tool_calls LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\') ORDER BY m.timestamp DESC LIMIT ? OFFSET 0",
      )
      .pluck()
      .all(`%${term}%`, `%${term}%`, `%${term}%`, limit) as number[];
    db.close();
    return ids;
  }
  const page = async (store: SessionStore, q: string, limit = 100) =>
    (await store.searchMessages(q, { limit })).map((h) => h.id);

  it("an index built by an earlier version (no blocks, old update trigger) is upgraded on next use", async () => {
    const path = join(tempDir(), "state.db");
    let now = 1_750_000_000;
    const store = await open(path, () => (now += 1));
    await store.createSession({ id: "s", source: "cli" });
    for (let i = 0; i < 40; i++)
      await store.appendMessage({ sessionId: "s", role: "user", content: `第${i}次测试` });
    expect(await page(store, "测试")).toEqual(referenceOrder(path, "测试"));
    await store.close();
    opened.splice(0);

    // Make the file look like one written by the version before the blocks existed.
    const raw = new Database(path);
    raw.exec(`DROP TABLE hermes_search_ts_blocks;
      DELETE FROM hermes_search_state WHERE key IN ('ts_blocks_next', 'ts_blocks_end');
      INSERT INTO hermes_search_state(key, value) VALUES ('ts_monotonic', 1);
      DROP TRIGGER hermes_search_queue_update;
      CREATE TRIGGER hermes_search_queue_update AFTER UPDATE OF id, content, tool_calls, tool_name ON messages BEGIN
    INSERT INTO hermes_search_queue(message_id) VALUES (old.id);
    INSERT INTO hermes_search_queue(message_id) VALUES (new.id);
END;`);
    // A timestamp-only change the old trigger does not queue, and a message from the past.
    raw.prepare("UPDATE messages SET timestamp = ? WHERE id = 3").run(1_750_000_500);
    raw
      .prepare(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', '旧的测试', ?)",
      )
      .run(1_750_000_010.5);
    raw.close();

    const again = await open(path, () => (now += 1));
    const before = await again.verifySearchIndex();
    expect(before.ok).toBe(true);
    expect(before.indexes[2]?.status).toBe("building");
    expect(await page(again, "测试")).toEqual(referenceOrder(path, "测试"));
    expect((await page(again, "测试", 5))[0]).toBe(3);

    const check = new Database(path, { readonly: true });
    const state = check.prepare("SELECT key, value FROM hermes_search_state ORDER BY key").all();
    const trigger = check
      .prepare("SELECT sql FROM sqlite_master WHERE name = 'hermes_search_queue_update'")
      .pluck()
      .get() as string;
    check.close();
    expect(state).toEqual([
      { key: "backfill_end", value: 40 },
      { key: "backfill_next", value: 40 },
      { key: "ts_blocks_end", value: 41 },
      { key: "ts_blocks_next", value: 41 },
    ]);
    expect(trigger).toContain("tool_name, timestamp ON messages");

    // From now on a timestamp-only change by another connection is queued and seen.
    const other = new Database(path);
    other.prepare("UPDATE messages SET timestamp = ? WHERE id = 7").run(1_750_000_900);
    other.close();
    expect((await page(again, "测试", 3))[0]).toBe(7);
    expect(await page(again, "测试")).toEqual(referenceOrder(path, "测试"));
    expect((await again.verifySearchIndex()).indexes[2]?.status).toBe("ok");
  });

  it("verify reports a block bound below a message's timestamp as damaged; rebuild repairs it", async () => {
    const path = join(tempDir(), "state.db");
    const store = await open(path);
    await store.createSession({ id: "s", source: "cli" });
    for (let i = 0; i < 5; i++)
      await store.appendMessage({ sessionId: "s", role: "user", content: `测试${i}` });
    await store.searchMessages("测试");
    const raw = new Database(path);
    raw.exec("UPDATE hermes_search_ts_blocks SET max_ts = 0 WHERE level = 0");
    raw.close();
    const report = await store.verifySearchIndex();
    expect(report.ok).toBe(false);
    expect(report.indexes[2]).toMatchObject({ status: "damaged", detail: expect.stringMatching(/bound/) });
    await store.rebuildSearchIndex();
    expect((await store.verifySearchIndex()).indexes[2]?.status).toBe("ok");
    expect(await page(store, "测试")).toEqual(referenceOrder(path, "测试"));
  });
});

/** The store's writes on the caller's thread, and in a writer thread with a read worker. */
const WRITE_MODES = [
  { writer: "inline", readers: 0 },
  { writer: "thread", readers: 1 },
] as const;

describe("short-CJK index: read while behind (its queue read around, no scan)", () => {
  /** The ids whose content, tool calls or tool name contain a term, by `test` over all of them. */
  function expected(path: string, test: (has: (term: string) => boolean) => boolean): number[] {
    const db = new Database(path, { readonly: true });
    const rows = db.prepare("SELECT id, content, tool_calls, tool_name FROM messages").all() as Array<{
      id: number;
      content: string | null;
      tool_calls: string | null;
      tool_name: string | null;
    }>;
    db.close();
    return rows
      .filter((r) => test((t) => [r.content, r.tool_calls, r.tool_name].some((c) => c?.includes(t))))
      .map((r) => r.id)
      .sort((a, b) => a - b);
  }

  /** The bigram 桂林 as the index stores it (`x` + hex of each code point). */
  const GUILIN = "x6842x6797";

  function queued(path: string): number {
    const db = new Database(path, { readonly: true });
    const n = (db.prepare("SELECT COUNT(*) AS n FROM hermes_search_queue").get() as { n: number }).n;
    db.close();
    return n;
  }

  /**
   * A file with a built index, then changed by the reference (appends, updates both ways, a
   * deleted session: all queued, the updated and deleted rows' old postings still in the
   * index), plus a posting planted for a message that is not queued and does not contain 桂林:
   * a search that reads the index finds it, a scan does not.
   */
  async function behindFile() {
    const path = join(tempDir(), "state.db");
    const store = await open(path);
    for (const id of ["s1", "s2", "s3"]) await store.createSession({ id, source: "cli" });
    const m = async (session: string, content: string) =>
      store.appendMessage({ sessionId: session, role: "user", content });
    const old = await m("s1", "桂林山水甲天下");
    const plain = await m("s1", "plain text only");
    const x = await m("s2", "普通的一句话");
    await m("s2", "龙的传人");
    await m("s3", "桂林米粉和龙井");
    await m("s2", "又是桂林");
    expect(await ids(store, "桂林")).toHaveLength(3); // builds the index, queue applied
    await store.close();
    const [fresh] = referenceProcess(path, [
      { kind: "append", session: "s1", content: "新的桂林消息" },
      { kind: "update", id: old, content: "没有了" },
      { kind: "update", id: x, content: "龙和桂林" },
      { kind: "delete-session", session: "s3" },
    ]);
    const raw = new Database(path);
    raw.prepare("INSERT INTO hermes_search_cjk(rowid, grams) VALUES (?, ?)").run(plain, GUILIN);
    raw.close();
    return { path, plain, fresh: fresh as number };
  }

  it("a read-only store answers from the index and the queued rows, exactly, and writes nothing", async () => {
    const { path, plain, fresh } = await behindFile();
    const depth = queued(path);
    expect(depth).toBeGreaterThan(0);
    const store = await openSessionStore({ path, readOnly: true });
    opened.push(store);
    const withPlanted = (list: number[]) => [...list, plain].sort((a, b) => a - b);
    expect(await ids(store, "桂林")).toEqual(withPlanted(expected(path, (has) => has("桂林"))));
    expect(await ids(store, "桂林")).toContain(fresh);
    expect(await ids(store, "桂林 OR 龙")).toEqual(
      withPlanted(expected(path, (has) => has("桂林") || has("龙"))),
    );
    expect(await ids(store, "桂林 NOT 龙")).toEqual(
      withPlanted(expected(path, (has) => has("桂林") && !has("龙"))),
    );
    expect(await ids(store, "龙")).toEqual(expected(path, (has) => has("龙")));
    // Newest first, as the reference's order: the timestamps of a page never rise.
    const page = await store.searchMessages("桂林 OR 龙", { limit: 50 });
    for (let i = 1; i < page.length; i++)
      expect(page[i]!.timestamp).toBeLessThanOrEqual(page[i - 1]!.timestamp);
    expect(queued(path)).toBe(depth);
  });

  it.each(WRITE_MODES)(
    "with only its queue left, a search beside a writer holding the lock reads around it; the catch-up follows the lock (writer: $writer)",
    async (options) => {
      const { path, plain } = await behindFile();
      const store = await openSessionStore({
        path,
        ...options,
        warmReaders: options.readers > 0,
        writeDeadlineMs: 600_000, // waiting for the lock would outlast the test
      });
      opened.push(store);
      const pending = store.stats().sideIndexes.cjk.pendingChanges;
      expect(pending).toBeGreaterThan(0);
      const blocker = new Database(path);
      blocker.exec("BEGIN IMMEDIATE");
      try {
        // Answered while the lock is held: the index read around its queue (the planted posting
        // is found, which a scan would not find), exact for every other row.
        expect(await ids(store, "桂林")).toEqual(
          [...expected(path, (has) => has("桂林")), plain].sort((a, b) => a - b),
        );
        expect(await ids(store, "龙")).toEqual(expected(path, (has) => has("龙")));
        expect(store.stats().sideIndexes.cjk.pendingChanges).toBe(pending);
      } finally {
        blocker.exec("ROLLBACK");
        blocker.close();
      }
      // The catch-up waited for the lock and ran before this later call of the write path (which
      // reports the planted posting as damage, rightly).
      await store.verifySearchIndex();
      expect(store.stats().sideIndexes.cjk.pendingChanges).toBe(0);
    },
  );

  it.each(WRITE_MODES)(
    "a writable store whose backlog goes to the builder reads around the queue meanwhile (writer: $writer, readers: $readers)",
    async (options) => {
      const { path, plain } = await behindFile();
      // More than the store applies inline (256): the search starts the builder and reads around.
      const raw = new Database(path);
      const add = raw.prepare(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', 'user', ?, ?)",
      );
      for (let i = 0; i < 400; i++)
        add.run(i % 4 === 0 ? `第${i}次去桂林` : `filler ${i}`, 1_800_000_000 + i);
      raw.close();
      const store = await openSessionStore({ path, ...options, warmReaders: options.readers > 0 });
      opened.push(store);
      const hits = await ids(store, "桂林");
      expect(hits).toEqual([...expected(path, (has) => has("桂林")), plain].sort((a, b) => a - b));
      expect(await cjkBuildSettled(store)).toMatchObject({ state: "ready", lastError: null });
      expect(queued(path)).toBe(0);
      // Caught up: the planted posting is still the index's (nothing queued touched it).
      expect(await ids(store, "桂林")).toEqual(hits);
    },
  );
});
