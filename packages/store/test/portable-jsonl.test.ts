import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import {
  ImportInvalidError,
  JSONL_FORMAT,
  openSessionStore,
  type SessionStore,
  writeJsonl,
} from "@hermes/store";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { copyOfSample, tempDir } from "./helpers/temp-dir.js";

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

async function open(path = join(tempDir(), "state.db")): Promise<SessionStore> {
  const store = await openSessionStore({ path });
  opened.push(store);
  return store;
}

const lines = (path: string) => readFileSync(path, "utf8").split("\n");

/** Every line but the header (which carries the export time). */
const body = (path: string) => lines(path).slice(1).join("\n");

async function rejection(p: Promise<unknown>): Promise<ImportInvalidError> {
  try {
    await p;
  } catch (error) {
    return error as ImportInvalidError;
  }
  throw new Error("expected the call to reject");
}

/** A JSONL file from a header and session objects (or raw lines). */
function jsonlFile(rows: unknown[], header: unknown = { format: JSONL_FORMAT, version: 1 }): string {
  const path = join(tempDir(), "in.jsonl");
  const text = [header, ...rows].map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n");
  writeFileSync(path, `${text}\n`);
  return path;
}

function ftsIntegrity(path: string): void {
  const db = new Database(path);
  try {
    for (const t of ["messages_fts", "messages_fts_trigram"]) {
      db.prepare(`INSERT INTO ${t}(${t}) VALUES ('integrity-check')`).run();
    }
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
  } finally {
    db.close();
  }
}

describe("JSONL export and import on real files", () => {
  it("round-trips the reference's sample: export → import into an empty file → export gives the same lines", async () => {
    const source = await open(copyOfSample());
    const dir = tempDir();
    const first = join(dir, "a.jsonl");
    const report = await source.exportJsonl(first);
    expect(report).toMatchObject({ sessions: 13, messages: 109 });
    expect(report.bytes).toBe(statSync(first).size);
    expect(statSync(first).mode & 0o777).toBe(0o600);
    const header = JSON.parse(lines(first)[0]!);
    expect(header).toMatchObject({ format: "hermes-sessions", version: 1, schema_version: 11 });
    expect(lines(first)).toHaveLength(1 + 13 + 1); // header, sessions, final newline

    const targetPath = join(tempDir(), "state.db");
    const target = await open(targetPath);
    const imported = await target.importSessions(first);
    expect(imported).toMatchObject({
      sessionsImported: 13,
      messagesImported: 109,
      invalid: [],
      conflicts: [],
    });
    const second = join(dir, "b.jsonl");
    await target.exportJsonl(second);
    expect(body(second)).toBe(body(first));
    // Stored JSON text is kept byte for byte (the reference writes `json.dumps` style).
    const raw = (await import("node:fs")).readFileSync(second, "utf8");
    expect(raw).toContain('\\"function\\": {\\"name\\": \\"terminal\\"');
    ftsIntegrity(targetPath);
  });

  it("is idempotent: importing the same file twice adds nothing", async () => {
    const source = await open(copyOfSample());
    const file = join(tempDir(), "a.jsonl");
    await source.exportJsonl(file);
    const targetPath = join(tempDir(), "state.db");
    const target = await open(targetPath);
    await target.importSessions(file);
    const again = await target.importSessions(file);
    expect(again).toMatchObject({
      sessionsImported: 0,
      messagesImported: 0,
      sessionsUnchanged: 13,
      conflicts: [],
    });
    expect(await target.sessionCount()).toBe(13);
    expect(await target.messageCount()).toBe(109);
    const db = new Database(targetPath, { readonly: true });
    expect(db.prepare("SELECT COUNT(*) AS n FROM messages_fts_trigram").get()).toEqual({ n: 109 });
    db.close();
  });

  it("imports children written before their parents (file in reverse order)", async () => {
    const source = await open(copyOfSample());
    const file = join(tempDir(), "a.jsonl");
    await source.exportJsonl(file);
    const [header, ...rest] = lines(file).filter((l) => l !== "");
    const reversed = join(tempDir(), "reversed.jsonl");
    writeFileSync(reversed, `${[header, ...rest.reverse()].join("\n")}\n`);
    const target = await open();
    const report = await target.importSessions(reversed);
    expect(report.sessionsImported).toBe(13);
    expect((await target.getSession("20260101_093000_cli002"))?.parent_session_id).toBe(
      "20260101_090000_cli001",
    );
    const again = join(tempDir(), "again.jsonl");
    await target.exportJsonl(again);
    expect(body(again)).toBe(body(file));
  });

  it("reports every bad line with its number and writes nothing", async () => {
    const good = {
      id: "a",
      source: "cli",
      started_at: 1,
      messages: [{ role: "user", timestamp: 2, content: "hi" }],
    };
    const file = jsonlFile([
      good,
      "{not json",
      { id: "b", started_at: 1, messages: [] },
      { id: "c", source: "cli", started_at: 1, messages: [{ role: "user", timestamp: "noon" }] },
      { id: "d", source: "cli", started_at: 1, parent_session_id: "ghost", messages: [] },
      { id: "e", source: "cli", started_at: 1, parent_session_id: "c", messages: [] },
      { ...good, messages: [] },
    ]);
    const store = await open();
    const err = await rejection(store.importSessions(file));
    expect(err).toBeInstanceOf(ImportInvalidError);
    expect(err.code).toBe("IMPORT_INVALID");
    expect(err.line).toBe(3);
    expect(err.lines.map((l) => l.line)).toEqual([3, 4, 5, 6, 7, 8]);
    expect(err.lines[0]!.message).toMatch(/not valid JSON/);
    expect(err.lines[1]!.message).toBe("source is required");
    expect(err.lines[2]!.message).toBe("messages[0].timestamp must be a finite number or null");
    expect(err.lines[3]!.message).toMatch(/ghost is neither in the file nor in the database/);
    expect(err.lines[4]!.message).toMatch(/parent session c \(line 5\) cannot be imported/);
    expect(err.lines[5]!.message).toMatch(/already appears on line 2/);
    expect(await store.sessionCount()).toBe(0);
    expect(await store.messageCount()).toBe(0);

    const skipped = await store.importSessions(file, { onInvalid: "skip" });
    expect(skipped.sessionsImported).toBe(1);
    expect(skipped.invalid.map((l) => l.line)).toEqual([3, 4, 5, 6, 7, 8]);
    expect(await store.getSession("a")).not.toBeNull();
  });

  it("refuses a file that is not a sessions export, empty, or of a newer version", async () => {
    const store = await open();
    const notHeader = await rejection(
      store.importSessions(jsonlFile([], { id: "a", source: "cli", started_at: 1 })),
    );
    expect(notHeader.line).toBe(1);
    expect(notHeader.message).toMatch(/format "hermes-sessions"/);
    const empty = join(tempDir(), "empty.jsonl");
    writeFileSync(empty, "");
    expect((await rejection(store.importSessions(empty))).line).toBe(1);
    const newer = await rejection(store.importSessions(jsonlFile([], { format: JSONL_FORMAT, version: 2 })));
    expect(newer.message).toMatch(/version 2 is newer/);
    const missing = await rejection(store.importSessions(join(tempDir(), "nope.jsonl")));
    expect(missing.code).toBe("INVALID_ARGUMENT");
  });

  it("reads CRLF files and ignores unknown keys (columns of a newer schema, exportAll's last_active)", async () => {
    const path = join(tempDir(), "crlf.jsonl");
    const rows = [
      { format: JSONL_FORMAT, version: 1 },
      {
        id: "a",
        source: "cli",
        started_at: 1,
        last_active: 9,
        handoff_state: "x",
        messages: [{ role: "user", timestamp: 2, content: "hi", platform: "y" }],
      },
    ];
    writeFileSync(path, rows.map((r) => JSON.stringify(r)).join("\r\n"));
    const store = await open();
    expect((await store.importSessions(path)).sessionsImported).toBe(1);
    expect((await store.getMessages("a")).map((m) => m.content)).toEqual(["hi"]);
  });

  it("imports exportAll() output (parsed JSON values) with equal content", async () => {
    const source = await open(copyOfSample());
    const target = await open();
    const all = await source.exportAll();
    const report = await target.importSessions(all);
    expect(report.sessionsImported).toBe(13);
    for (const s of all) expect(await target.getMessages(s.id)).toEqual(s.messages);
  });

  it("keeps message ids unless taken, and stays idempotent when one was renumbered", async () => {
    const source = await open(copyOfSample());
    const file = join(tempDir(), "a.jsonl");
    await source.exportJsonl(file);
    const target = await open();
    await target.createSession({ id: "mine", source: "cli" });
    const taken = await target.appendMessage({ sessionId: "mine", role: "user", content: "already here" });
    expect(taken).toBe(1);
    await target.importSessions(file);
    const cli001 = await target.getMessages("20260101_090000_cli001");
    expect(cli001.map((m) => m.id)).not.toContain(1);
    expect(cli001.map((m) => m.id).slice(1)).toEqual([2, 3, 4]);
    expect((await target.getMessages("mine")).map((m) => m.content)).toEqual(["already here"]);
    const again = await target.importSessions(file);
    expect(again).toMatchObject({ sessionsImported: 0, sessionsUnchanged: 13, conflicts: [] });
  });

  it("writes JSONL to a stream, and writeJsonl writes any iterable the same way", async () => {
    const store = await open(copyOfSample());
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    const report = await store.exportJsonl(stream, { source: "cli" });
    const text = Buffer.concat(chunks).toString("utf8");
    expect(report.sessions).toBe(6);
    expect(JSON.parse(text.split("\n")[0]!).filter).toEqual({ source: "cli" });
    const viaIterable = join(tempDir(), "w.jsonl");
    const w = await writeJsonl(store.exportStream({ source: "cli" }), viaIterable);
    expect(w).toMatchObject({ sessions: 6, messages: report.messages });
    expect(body(viaIterable)).toBe(text.split("\n").slice(1).join("\n"));
  });

  it("stops early without leaving the snapshot connection open", async () => {
    const path = copyOfSample();
    const store = await open(path);
    for await (const s of store.exportStream()) {
      expect(s.id).toBe("20260101_090000_cli001");
      break;
    }
    // A write after an abandoned export still commits (no reader left in a transaction).
    await store.appendMessage({ sessionId: "20260101_090000_cli001", role: "user", content: "after" });
    expect(await store.messageCount({ sessionId: "20260101_090000_cli001" })).toBe(5);
  });
});

describe("export destinations", () => {
  it("refuses a destination it cannot write, leaving nothing behind", async () => {
    const store = await open(copyOfSample());
    const dir = join(tempDir(), "missing-dir");
    const err = await rejection(store.exportJsonl(join(dir, "x.jsonl")));
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect((await rejection(store.exportJsonl(42 as unknown as string))).code).toBe("INVALID_ARGUMENT");
  });
});
