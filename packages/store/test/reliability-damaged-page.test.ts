import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  cpSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HermesStoreError, openSessionStore, type SessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "./helpers/temp-dir.js";

// Issue 9, scenario 3: a damaged page of `messages` in an otherwise good file. The store must
// answer with a typed STORE_CORRUPT (at open or at the first call that meets the page), never
// crash, and from then on write nothing and checkpoint nothing: the file stays byte for byte as
// it was, so a recovery tool (or `.recover`) still finds everything the damage spared.

const SESSIONS = 6;
const PER_SESSION = 120;

const baseDir = mkdtempSync(join(tmpdir(), "hermes-damaged-page-"));
afterAll(() => rmSync(baseDir, { recursive: true, force: true }));
let base: Promise<string> | undefined;

async function build(path: string): Promise<string> {
  const store = await openSessionStore({ path });
  for (let s = 0; s < SESSIONS; s++) {
    await store.createSession({ id: `s${s}`, source: "cli" });
    await store.appendMessages(
      Array.from({ length: PER_SESSION }, (_, i) => ({
        sessionId: `s${s}`,
        role: i % 2 === 0 ? "user" : "assistant",
        content: `session ${s} message ${i} ${"lorem ipsum dolor sit amet ".repeat(8)}`,
      })),
    );
  }
  await store.close();
  return path;
}

/** A copy of a populated, cleanly closed file (no WAL). */
async function populated(): Promise<string> {
  base ??= build(join(baseDir, "state.db"));
  const path = join(tempDir(), "state.db");
  cpSync(await base, path);
  return path;
}

/** Leaf pages of `messages` in key order (first = lowest ids), and the page size. */
function messagesLeaves(path: string): { leaves: number[]; root: number; pageSize: number } {
  const db = new Database(path, { readonly: true });
  try {
    const leaves = (
      db
        .prepare("SELECT pageno FROM dbstat WHERE name = 'messages' AND pagetype = 'leaf' ORDER BY path")
        .all() as Array<{ pageno: number }>
    ).map((r) => r.pageno);
    const root = (
      db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'messages'").get() as {
        rootpage: number;
      }
    ).rootpage;
    return { leaves, root, pageSize: Number(db.pragma("page_size", { simple: true })) };
  } finally {
    db.close();
  }
}

/** Overwrites one page with random bytes, in place. */
function damagePage(path: string, pageno: number, pageSize: number): void {
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, randomBytes(pageSize), 0, pageSize, (pageno - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
}

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

/** `await fn()` must reject with a HermesStoreError; returns its code. */
async function codeOf(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(HermesStoreError);
    return (error as HermesStoreError).code;
  }
  return "resolved";
}

/** Writes of every kind, each of which must now be refused. */
async function expectWritesRefused(store: SessionStore): Promise<void> {
  expect(await codeOf(() => store.createSession({ id: "after-damage", source: "cli" }))).toBe(
    "STORE_CORRUPT",
  );
  expect(await codeOf(() => store.appendMessage({ sessionId: "s0", role: "user", content: "x" }))).toBe(
    "STORE_CORRUPT",
  );
  expect(await codeOf(() => store.setMeta("k", "v"))).toBe("STORE_CORRUPT");
  expect(await codeOf(() => store.setSessionTitle("s1", "a title"))).toBe("STORE_CORRUPT");
  expect(await codeOf(() => store.updateTokenCounts("s1", { inputTokens: 5 }))).toBe("STORE_CORRUPT");
  expect(await codeOf(() => store.rebuildSearchIndex())).toBe("STORE_CORRUPT");
}

function expectUnchanged(path: string, hash: string, size: number): void {
  expect(statSync(path).size).toBe(size);
  expect(sha256(path)).toBe(hash);
  // Nothing waits in a WAL to be checkpointed into the file later either.
  if (existsSync(`${path}-wal`)) expect(statSync(`${path}-wal`).size).toBe(0);
}

// With a writer thread, what a read on this side (or in a read worker) finds reaches the
// writer, which refuses every later write, as the caller's own queue does.
describe.each(["inline", "thread"] as const)(
  "a damaged page of messages (issue 9, scenario 3; writer: %s)",
  (writer) => {
    it("a read meets it: STORE_CORRUPT; then no write, no checkpoint, the file unchanged, every time", async () => {
      const path = await populated();
      const { leaves, pageSize } = messagesLeaves(path);
      expect(leaves.length).toBeGreaterThan(20);
      damagePage(path, leaves[Math.floor(leaves.length / 2)] as number, pageSize);
      const hash = sha256(path);
      const size = statSync(path).size;

      // Opening again and again (an agent restarting after each failure) behaves the same way.
      for (let round = 0; round < 3; round++) {
        const store = await openSessionStore({ path, writer });
        const codes: string[] = [];
        for (let s = 0; s < SESSIONS; s++) {
          codes.push(await codeOf(async () => (await store.getMessages(`s${s}`)).length));
        }
        expect(codes).toContain("STORE_CORRUPT");
        expect(codes.filter((c) => c !== "STORE_CORRUPT" && c !== "resolved")).toEqual([]);
        // What the damage spared stays readable.
        expect(codes).toContain("resolved");
        expect((await store.getSession("s0"))?.message_count).toBe(PER_SESSION);
        await expectWritesRefused(store);
        await store.close();
        expectUnchanged(path, hash, size);
      }
    });

    it("a write meets it: STORE_CORRUPT, nothing kept; later writes refused; the file unchanged", async () => {
      const path = await populated();
      const { leaves, pageSize } = messagesLeaves(path);
      // The rightmost leaf: where the next message's row goes.
      damagePage(path, leaves.at(-1) as number, pageSize);
      const hash = sha256(path);
      const size = statSync(path).size;

      const store = await openSessionStore({ path, writer });
      expect(
        await codeOf(() =>
          store.appendMessage({ sessionId: `s${SESSIONS - 1}`, role: "user", content: "new" }),
        ),
      ).toBe("STORE_CORRUPT");
      await expectWritesRefused(store);
      // Reads that do not touch the page still answer.
      expect(await store.getMessages("s0")).toHaveLength(PER_SESSION);
      await store.close();
      expectUnchanged(path, hash, size);
    });

    it("the root page of messages: STORE_CORRUPT at open or at the first call, the file unchanged", async () => {
      const path = await populated();
      const { root, pageSize } = messagesLeaves(path);
      damagePage(path, root, pageSize);
      const hash = sha256(path);
      const size = statSync(path).size;

      let store: SessionStore | undefined;
      let openCode = "resolved";
      try {
        store = await openSessionStore({ path, writer });
      } catch (error) {
        expect(error).toBeInstanceOf(HermesStoreError);
        openCode = (error as HermesStoreError).code;
      }
      if (store === undefined) {
        expect(openCode).toBe("STORE_CORRUPT");
      } else {
        const opened = store;
        expect(await codeOf(() => opened.getMessages("s0"))).toBe("STORE_CORRUPT");
        await expectWritesRefused(opened);
        await opened.close();
      }
      expectUnchanged(path, hash, size);
    });
  },
);
