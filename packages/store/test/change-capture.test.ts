// Change capture over an agent's file: after every operation another process does to a copy of
// the v11, v30 and v31 fixtures, the batches applied to an in-memory mirror equal a fresh full
// read of the file; a replaced or restored file yields a resync; the file is never touched.
import { chmodSync, copyFileSync, readdirSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { type ChangeBatch, changesSince, InvalidArgumentError } from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ChangeMirror, expectMirrorEqualsFile, pollUntouched } from "./helpers/change-mirror.js";
import { runChild, startChild } from "./helpers/child-process.js";
import { fileState } from "./helpers/file-state.js";
import { copyOfFixture, SAMPLE_DB, tempDir, V30_SAMPLE_DB, V31_SAMPLE_DB } from "./helpers/temp-dir.js";

type Op = [op: string, args: Record<string, unknown>];

async function agent(path: string, [op, args]: Op): Promise<void> {
  const child = startChild("agent-ops.mjs", [path, op, JSON.stringify(args)]);
  const { code, stderr } = await child.exited;
  if (code !== 0) throw new Error(`${op} failed: ${stderr}`);
}

/** Runs each operation in a child process, then polls and compares. */
async function runSequence(path: string, ops: readonly Op[]): Promise<ChangeMirror> {
  const mirror = new ChangeMirror();
  const first = await pollUntouched(mirror, path);
  expect(first[0]?.kind).toBe("resync");
  expect(first.length).toBeGreaterThan(2); // batchSize 40: the copy comes in several batches
  await expectMirrorEqualsFile(mirror, path);
  for (const op of ops) {
    await agent(path, op);
    const batches = await pollUntouched(mirror, path);
    expect(
      batches.map((b) => b.kind),
      `${op[0]} is followed, not resynchronised`,
    ).not.toContain("resync");
    await expectMirrorEqualsFile(mirror, path);
  }
  return mirror;
}

const NEWER_OPS: Op[] = [
  ["ref-append", { session: "20260102_120000_tg0001", content: "another turn", role: "user" }],
  [
    "ref-append",
    { session: "20260102_120000_tg0001", content: "ok", role: "assistant", toolCalls: [{ id: "c1" }] },
  ],
  ["create", { session: "20261201_000000_new001", source: "cli" }],
  ["ref-append", { session: "20261201_000000_new001", content: "hello 桂林", role: "user" }],
  ["ref-append", { session: "20261201_000000_new001", content: "hi", role: "assistant" }],
  ["ref-append", { session: "20261201_000000_new001", content: "and then?", role: "user" }],
  ["ref-append", { session: "20261201_000000_new001", content: "this", role: "assistant" }],
  ["title", { session: "20261201_000000_new001", title: "a new one" }],
  ["compact", { session: "20261201_000000_new001" }],
  ["ref-append", { session: "20261201_000000_new001", content: "after compaction", role: "user" }],
  ["rewind", { session: "20261201_000000_new001" }],
  ["rewind", { session: "20260107_090000_cli007" }],
  ["compact", { session: "20260102_120000_tg0001" }],
  ["flag", { session: "20260105_090000_cli005", flag: "archived", value: 1 }],
  ["flag", { session: "20260106_000000_matrix", flag: "pinned", value: 1 }],
  ["flag", { session: "20260106_000000_signal", flag: "hidden", value: 1 }],
  ["flag", { session: "20260106_000000_acp", flag: "archived", value: 1 }],
  ["end", { session: "20260106_000000_acp", reason: "user_exit" }],
  ["delete", { session: "20260106_000000_subagent" }],
  ["prune", {}],
];

describe("changesSince: a mirror of an agent's file equals a fresh read after every operation", () => {
  it("v11 (rollback journal, then WAL): the store's and the reference's writes", async () => {
    const path = copyOfFixture(SAMPLE_DB);
    const s = "20260102_120000_tg0001";
    const mirror = await runSequence(path, [
      ["ref-append", { session: s, content: "reference insert" }],
      ["store-append", { session: s, content: "the store's append" }],
      ["store-title", { session: s, title: "renamed by the store" }],
      ["title", { session: s, title: "renamed by SQL" }],
      ["store-end", { session: s, reason: "user_exit" }],
      ["store-delete", { session: "20260101_093000_cli002" }],
      ["store-prune", {}],
    ]);
    // The reference writer switches the file to WAL: follow it while it writes.
    const resyncs = mirror.kinds.filter((k) => k === "resync").length;
    const ac = new AbortController();
    const writer = startChild("reference-writer.mjs", [path, "cc", "60"]);
    const feed = mirror.follow(path, ac.signal);
    expect((await writer.exited).code).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    ac.abort();
    await feed;
    expect(mirror.kinds.filter((k) => k === "resync")).toHaveLength(resyncs);
    expect(mirror.kinds.length).toBeGreaterThan(resyncs + 8);
    await mirror.poll(path);
    expect(mirror.sessionMessages("reference-cc")).toHaveLength(60);
    await expectMirrorEqualsFile(mirror, path);
  });

  it("v30 (rollback journal): appends, compaction, rewind, title, end, flags, delete, prune", async () => {
    await runSequence(copyOfFixture(V30_SAMPLE_DB), NEWER_OPS);
  });

  it("v31: the same with uids, and the auto-archive flag", async () => {
    const path = copyOfFixture(V31_SAMPLE_DB);
    const mirror = await runSequence(path, [
      ...NEWER_OPS,
      ["flag", { session: "20260104_100500_cli004", flag: "auto_archived", value: 1 }],
    ]);
    const copies = mirror.sessionMessages("20261201_000000_new001");
    expect(copies.every((m) => typeof m.message_uid === "string")).toBe(true);
    expect(mirror.sessions.get("20260104_100500_cli004")?.auto_archived).toBe(true);
  });
});

/** Waits until `check` holds, polling every 20 ms, for at most `ms`. */
async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("changesSince with sessionScanIntervalMs: appends at once, the rest at the next full pass", () => {
  it("appends-only batches are exact; a title change waits for the pass", async () => {
    const path = copyOfFixture(V30_SAMPLE_DB);
    const s = "20260102_120000_tg0001";
    const mirror = new ChangeMirror();
    await mirror.poll(path);
    const batches: ChangeBatch[] = [];
    const ac = new AbortController();
    const feed = mirror.follow(path, ac.signal, (b) => batches.push(b), 60_000);
    await agent(path, ["title", { session: "20260103_080000_dc0001", title: "seen at the next pass" }]);
    await agent(path, ["ref-append", { session: s, content: "fast path" }]);
    await until(() => mirror.sessionMessages(s).some((m) => m.content === "fast path"));
    await agent(path, ["rewind", { session: s }]);
    await agent(path, ["ref-append", { session: s, content: "after the rewind" }]);
    await until(() => mirror.sessionMessages(s).some((m) => m.content === "after the rewind"));
    ac.abort();
    await feed;
    // The follower's first poll was a full pass that found nothing (not yielded); every batch
    // after it read appends only.
    expect(batches.length).toBeGreaterThan(1);
    expect(batches.every((b) => !b.caughtUp && b.deletedSessionIds.length === 0)).toBe(true);
    expect(mirror.sessions.get("20260103_080000_dc0001")?.title).not.toBe("seen at the next pass");
    expect(mirror.sessionMessages(s).filter((m) => m.view_state === "superseded").length).toBeGreaterThan(0);
    await mirror.poll(path); // a full pass
    expect(mirror.sessions.get("20260103_080000_dc0001")?.title).toBe("seen at the next pass");
    await expectMirrorEqualsFile(mirror, path);
  });

  it("a session changed without a new message comes with the next full pass", async () => {
    const path = copyOfFixture(V31_SAMPLE_DB);
    const mirror = new ChangeMirror();
    await mirror.poll(path);
    const ac = new AbortController();
    const feed = mirror.follow(path, ac.signal, () => {}, 300);
    await agent(path, ["flag", { session: "20260106_000000_acp", flag: "hidden", value: 1 }]);
    await until(() => mirror.sessions.get("20260106_000000_acp")?.hidden === true);
    ac.abort();
    await feed;
    await expectMirrorEqualsFile(mirror, path);
  });
});

describe("changesSince: a cursor taken between two batches resumes there", () => {
  it("a first copy stopped after two batches, resumed with writes in between", async () => {
    const path = copyOfFixture(V31_SAMPLE_DB);
    const mirror = new ChangeMirror();
    let taken = 0;
    for await (const b of changesSince(path, null, { batchSize: 20 })) {
      mirror.apply(b);
      if (++taken === 3) break; // the resync and two batches of rows: a consumer killed here
    }
    expect(mirror.sessions.size).toBeGreaterThan(0);
    await agent(path, ["compact", { session: "20260102_120000_tg0001" }]);
    await agent(path, ["delete", { session: "20260106_000000_subagent" }]);
    const rest = await mirror.poll(path, { batchSize: 20 });
    expect(rest.map((b) => b.kind)).not.toContain("resync");
    await expectMirrorEqualsFile(mirror, path);
  });
});

describe("changesSince: what a cursor cannot follow is a resync", () => {
  it("a different fixture copied over the file", async () => {
    const path = copyOfFixture(SAMPLE_DB);
    const mirror = new ChangeMirror();
    await mirror.poll(path);
    copyFileSync(V30_SAMPLE_DB, path);
    const batches = await mirror.poll(path);
    expect(batches[0]?.kind).toBe("resync");
    expect(batches[0]?.reason).toMatch(/schema version|application_id|rebuilt/);
    await expectMirrorEqualsFile(mirror, path);
  });

  it("a restored older copy of the same file", async () => {
    const path = copyOfFixture(V31_SAMPLE_DB);
    const backup = join(tempDir(), "backup.db");
    copyFileSync(path, backup);
    const mirror = new ChangeMirror();
    await mirror.poll(path);
    await agent(path, ["ref-append", { session: "20260102_120000_tg0001", content: "lost on restore" }]);
    await mirror.poll(path);
    copyFileSync(backup, path);
    const batches = await mirror.poll(path);
    expect(batches[0]?.kind).toBe("resync");
    expect(batches[0]?.reason).toMatch(/went backwards/);
    await expectMirrorEqualsFile(mirror, path);
    expect(mirror.kinds.filter((k) => k === "resync")).toHaveLength(2);
  });

  it("while following, an older copy renamed over the file", async () => {
    const path = copyOfFixture(V30_SAMPLE_DB);
    const backup = join(tempDir(), "backup.db");
    copyFileSync(path, backup);
    const mirror = new ChangeMirror();
    await mirror.poll(path);
    const ac = new AbortController();
    const seen: string[] = [];
    const feed = mirror.follow(path, ac.signal, (b) => {
      seen.push(b.kind);
      if (b.kind !== "resync" && seen.includes("resync") && b.caughtUp) ac.abort();
    });
    await agent(path, ["ref-append", { session: "20260102_120000_tg0001", content: "lost on restore" }]);
    while (seen.length === 0) await new Promise((r) => setTimeout(r, 20));
    const staged = join(dirname(path), "restore.tmp");
    copyFileSync(backup, staged);
    renameSync(staged, path);
    await feed;
    expect(seen[0]).toBe("changes");
    expect(seen).toContain("resync");
    await expectMirrorEqualsFile(mirror, path);
  });

  it("a table rebuilt (VACUUM renumbers nothing here, so a new column stands in)", async () => {
    const path = copyOfFixture(SAMPLE_DB);
    const mirror = new ChangeMirror();
    await mirror.poll(path);
    const db = new Database(path);
    db.exec("ALTER TABLE sessions ADD COLUMN extra TEXT");
    db.close();
    const batches = await mirror.poll(path);
    expect(batches[0]?.kind).toBe("resync");
    expect(batches[0]?.reason).toMatch(/rebuilt or reshaped/);
  });

  it("a cursor that is not one is an InvalidArgumentError", () => {
    expect(() => changesSince(SAMPLE_DB, "{nope")).toThrow(InvalidArgumentError);
    expect(() => changesSince(SAMPLE_DB, null, { batchSize: 0 })).toThrow(InvalidArgumentError);
  });

  it("a missing file is STORE_READ_ONLY, and nothing is created", async () => {
    const dir = tempDir();
    const path = join(dir, "state.db");
    await expect(new ChangeMirror().poll(path)).rejects.toMatchObject({ code: "STORE_READ_ONLY" });
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("changesSince reads only", () => {
  it("in a read-only folder (0555), a WAL file and a rollback-journal file, nothing changes", async () => {
    for (const fixture of [V31_SAMPLE_DB, SAMPLE_DB]) {
      const path = copyOfFixture(fixture, 0o444);
      if (fixture === SAMPLE_DB) {
        // Make it a WAL file first (as the reference writer leaves it), then lock the folder.
        chmodSync(path, 0o644);
        await runChild("reference-writer.mjs", [path, "ro", "5"]);
        chmodSync(path, 0o444);
      }
      const dir = dirname(path);
      chmodSync(dir, 0o555);
      try {
        const before = fileState(path);
        const mirror = new ChangeMirror();
        await mirror.poll(path);
        await mirror.poll(path);
        expect(fileState(path)).toEqual(before);
        expect(readdirSync(dir)).toEqual(["state.db"]);
        await expectMirrorEqualsFile(mirror, path);
      } finally {
        chmodSync(dir, 0o755);
      }
    }
  });
});
